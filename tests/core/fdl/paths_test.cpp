#include "core/fdl/paths.hpp"
#include <doctest/doctest.h>

#include <string>
#include <string_view>

using namespace mirror::fdl;
using namespace std::string_view_literals;

// The literal "...\0..."sv keeps its NUL: a std::string_view with an explicit length.

TEST_CASE("relative_path_problem accepts the paths repositories use") {
    for (std::string_view path :
         {"ducklake.duckdb"sv, "catalogs/1.0.duckdb"sv, "main/t/ducklake-019a3c4e.parquet"sv, "a"sv,
          "a/b/c/d"sv, "..a/b"sv, "a../b"sv, "a/.hidden"sv, "a/b.c"sv, "main/t/été.parquet"sv,
          "日本/データ.parquet"sv, "emoji/\xf0\x9f\x98\x80.parquet"sv}) {
        CAPTURE(path);
        CHECK_FALSE(relative_path_problem(path).has_value());
    }
}

TEST_CASE("relative_path_problem refuses absolute paths, dot segments and empty segments") {
    for (std::string_view path :
         {""sv, "/"sv, "/abs"sv, "/data/x.parquet"sv, ".."sv, "../x"sv, "a/../b"sv, "a/.."sv, "."sv, "./a"sv,
          "a/./b"sv, "a/."sv, "a//b"sv, "//a"sv, "a/"sv, "a/b/"sv}) {
        CAPTURE(path);
        auto problem = relative_path_problem(path);
        REQUIRE(problem.has_value());
        CHECK_FALSE(problem->empty()); // a reason to show
    }
}

TEST_CASE("relative_path_problem refuses backslashes, NUL and control characters") {
    for (std::string_view path :
         {"a\\b"sv, "..\\x"sv, "\\abs"sv, "a\0b"sv, "a\0"sv, "\0"sv, "a\nb"sv, "a\rb"sv, "a\tb"sv, "\x1b[0m"sv,
          "a\x7f"sv, "a\x01/b"sv}) {
        CAPTURE(path.size());
        CHECK(relative_path_problem(path).has_value());
    }
    // The NUL really is inside the view: the same text cut at the NUL is fine.
    CHECK_FALSE(relative_path_problem("a\0b"sv.substr(0, 1)).has_value());
}

TEST_CASE("relative_path_problem refuses URLs") {
    for (std::string_view path : {"s3://x/y"sv, "https://example.org/a.parquet"sv, "file:///etc/passwd"sv,
                                  "data/s3://x"sv}) {
        CAPTURE(path);
        CHECK(relative_path_problem(path).has_value());
    }
}

TEST_CASE("relative_path_problem refuses bytes that are not UTF-8") {
    for (std::string_view path : {
             "\xff"sv,                 // never valid
             "a/\xfe.parquet"sv,       // never valid
             "\xc0\xaf"sv,             // overlong '/'
             "\xe0\x80\xaf"sv,         // overlong '/', three bytes
             "\xf0\x80\x80\xaf"sv,     // overlong '/', four bytes
             "\xed\xa0\x80"sv,         // U+D800, a surrogate
             "\xed\xbf\xbf"sv,         // U+DFFF, a surrogate
             "\xf4\x90\x80\x80"sv,     // past U+10FFFF
             "\x80"sv,                 // a lone continuation byte
             "\xc3"sv,                 // truncated two-byte form
             "x\xe2\x82"sv,            // truncated three-byte form
             "\xc3("sv,                // a lead byte without its continuation
         }) {
        CAPTURE(path.size());
        CHECK(relative_path_problem(path).has_value());
        CHECK_FALSE(is_valid_utf8(path));
    }
}

TEST_CASE("is_valid_utf8 accepts the edges of each encoding length") {
    for (std::string_view text : {""sv, "\x7f"sv, "\xc2\x80"sv, "\xdf\xbf"sv, "\xe0\xa0\x80"sv, "\xed\x9f\xbf"sv,
                                  "\xee\x80\x80"sv, "\xef\xbf\xbf"sv, "\xf0\x90\x80\x80"sv,
                                  "\xf4\x8f\xbf\xbf"sv, "été"sv}) {
        CAPTURE(text.size());
        CHECK(is_valid_utf8(text));
    }
}

TEST_CASE("data_dir_problem wants a relative folder ending in '/'") {
    CHECK_FALSE(data_dir_problem("data/").has_value());
    CHECK_FALSE(data_dir_problem("a/b/").has_value());
    CHECK_FALSE(data_dir_problem("lake-data/2025/").has_value());

    for (std::string_view dir : {"data"sv, ""sv, "/"sv, "/data/"sv, "../d/"sv, "d/../"sv, "./"sv, "data//"sv,
                                 "a\\b/"sv, "s3://bucket/"sv, "da\0ta/"sv, "\xff/"sv}) {
        CAPTURE(dir.size());
        CHECK(data_dir_problem(dir).has_value());
    }
}

TEST_CASE("ref_name_problem accepts ordinary branch and tag names") {
    for (std::string_view name : {"refs/heads/main"sv, "refs/heads/feature/x"sv, "refs/tags/2025-final"sv,
                                  "refs/tags/v1.0"sv, "refs/heads/a.b"sv, "refs/heads/x@y"sv, "refs/heads/@"sv,
                                  "refs/heads/été"sv, "refs/heads/a-lock"sv, "refs/heads/lock"sv}) {
        CAPTURE(name);
        CHECK_FALSE(ref_name_problem(name).has_value());
    }
}

TEST_CASE("ref_name_problem refuses what git check-ref-format refuses") {
    for (std::string_view name : {
             "refs/heads/a..b"sv,     // ".."
             "refs/heads/.."sv,       // ".." as a component
             "refs/heads/a@{1}"sv,    // "@{"
             "refs/heads/a~1"sv,      // '~'
             "refs/heads/a^"sv,       // '^'
             "refs/heads/a:b"sv,      // ':'
             "refs/heads/a?"sv,       // '?'
             "refs/heads/a*"sv,       // '*'
             "refs/heads/a[b"sv,      // '['
             "refs/heads/a\\b"sv,     // backslash
             "refs/heads/a b"sv,      // space
             "refs/heads/a\tb"sv,     // control character
             "refs/heads/a\x7f"sv,    // DEL
             "refs/heads/a\0b"sv,     // NUL
             "refs/heads/.hidden"sv,  // a component starting with '.'
             "refs/.heads/x"sv,       // the same, in the middle
             "refs/heads/x.lock"sv,   // a component ending in ".lock"
             "refs/heads/x.lock/y"sv, // the same, in the middle
             "refs/heads/x/"sv,       // trailing '/'
             "refs/heads/x."sv,       // trailing '.'
             "refs//heads/x"sv,       // empty component
             "/refs/heads/x"sv,       // leading '/'
             "@"sv,                   // '@' alone
             ""sv,                    // empty
             "refs/heads/\xff"sv,     // not UTF-8
         }) {
        CAPTURE(name.size());
        CAPTURE(name);
        CHECK(ref_name_problem(name).has_value());
    }
}

TEST_CASE("is_mirrored_ref takes branches and tags only") {
    CHECK(is_mirrored_ref("refs/heads/main"));
    CHECK(is_mirrored_ref("refs/heads/feature/x"));
    CHECK(is_mirrored_ref("refs/tags/2025-final"));
    CHECK(is_mirrored_ref("refs/heads/a"));

    CHECK_FALSE(is_mirrored_ref("refs/requests/1"));
    CHECK_FALSE(is_mirrored_ref("refs/heads/"));
    CHECK_FALSE(is_mirrored_ref("refs/tags/"));
    CHECK_FALSE(is_mirrored_ref("refs/heads"));
    CHECK_FALSE(is_mirrored_ref("refs/notes/x"));
    CHECK_FALSE(is_mirrored_ref("HEAD"));
    CHECK_FALSE(is_mirrored_ref("heads/main"));
    CHECK_FALSE(is_mirrored_ref("refs/headsx/main"));
    CHECK_FALSE(is_mirrored_ref(""));
}

TEST_CASE("ref_name_problem refuses one-level names, as git check-ref-format does by default") {
    CHECK(mirror::fdl::ref_name_problem("main").has_value());
    CHECK(mirror::fdl::ref_name_problem("HEAD").has_value());
    CHECK_FALSE(mirror::fdl::ref_name_problem("refs/main").has_value());
}
