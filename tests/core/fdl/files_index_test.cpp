#include "core/fdl/files_index.hpp"
#include <doctest/doctest.h>

#include "tests/support/results.hpp"

#include "core/fdl/errors.hpp"

#include <string>
#include <string_view>

using namespace mirror::fdl;
using boost::system::error_code;

using mirror::test::code_of;
using mirror::test::message_of;

namespace {

constexpr std::string_view file = "versions/x/files.json";

// One table with one file whose `path` is `path`.
std::string one_file(std::string_view path) {
    return R"({"tables":{"main.t":{"files":[{"path":")" + std::string(path) + R"(","rows":1,"bytes":10}]}}})";
}

data_file_entry entry(std::string path, std::uint64_t bytes) {
    data_file_entry e;
    e.path = std::move(path);
    e.bytes = bytes;
    return e;
}

} // namespace

TEST_CASE("the spec's example parses, deletes and footer included") {
    auto r = parse_files_index(R"({
      "tables": {
        "main.population": {
          "files": [
            {
              "path": "main/population/ducklake-019a3c4e.parquet",
              "rows": 1741,
              "bytes": 52311,
              "footer_bytes": 2048,
              "deletes": { "path": "main/population/ducklake-019a3c4f-delete.parquet", "rows": 3, "bytes": 812 }
            },
            { "path": "main/population/ducklake-019a3c50.parquet", "rows": 5, "bytes": 900 }
          ]
        },
        "main.empty": { "files": [] },
        "main.renamed": { "renamed_columns": true, "files": [], "future_field": 1 }
      },
      "generator": "ignored"
    })",
                               file);
    INFO(message_of(r));
    REQUIRE(r.has_value());
    REQUIRE(r->tables.size() == 3);

    table_entry const* population = nullptr;
    table_entry const* renamed = nullptr;
    table_entry const* empty = nullptr;
    for (auto const& t : r->tables) {
        if (t.name == "main.population")
            population = &t;
        if (t.name == "main.renamed")
            renamed = &t;
        if (t.name == "main.empty")
            empty = &t;
    }
    REQUIRE(population != nullptr);
    REQUIRE(renamed != nullptr);
    REQUIRE(empty != nullptr);
    CHECK(r->tables[0].name == "main.population"); // in the file's order
    CHECK(r->tables[2].name == "main.renamed");

    CHECK_FALSE(population->renamed_columns);
    REQUIRE(population->files.size() == 2);
    auto const& first = population->files[0];
    CHECK(first.path == "main/population/ducklake-019a3c4e.parquet");
    CHECK(first.rows == 1741u);
    CHECK(first.bytes == 52311u);
    CHECK(first.footer_bytes == std::optional<std::uint64_t>(2048));
    REQUIRE(first.deletes.has_value());
    CHECK(first.deletes->path == "main/population/ducklake-019a3c4f-delete.parquet");
    CHECK(first.deletes->rows == 3u);
    CHECK(first.deletes->bytes == 812u);

    auto const& second = population->files[1];
    CHECK(second.path == "main/population/ducklake-019a3c50.parquet");
    CHECK_FALSE(second.footer_bytes.has_value());
    CHECK_FALSE(second.deletes.has_value());

    CHECK(renamed->renamed_columns);
    CHECK(empty->files.empty());
}

TEST_CASE("a table without files is empty") {
    auto r = parse_files_index(R"({"tables":{"main.t":{}}})", file);
    REQUIRE(r.has_value());
    REQUIRE(r->tables.size() == 1);
    CHECK(r->tables[0].files.empty());
    auto none = parse_files_index(R"({"tables":{}})", file);
    REQUIRE(none.has_value());
    CHECK(none->tables.empty());
}

TEST_CASE("paths that leave data_dir or carry bad bytes are refused") {
    for (std::string_view path : {"../x.parquet", "main/../../x", "/abs.parquet", "a//b", "a/./b", "a/", "",
                                  "s3://bucket/x", "a\\\\b", "a\\u0000b", "a\\nb", "\\u001b"}) {
        CAPTURE(path);
        auto r = parse_files_index(one_file(path), file);
        CHECK(code_of(r) == make_error_code(fdl_errc::bad_path));
        CHECK(message_of(r).starts_with("versions/x/files.json: tables.main.t.files[0].path: "));
    }
    auto del = parse_files_index(R"({"tables":{"main.t":{"files":[{"path":"a","rows":1,"bytes":1,
                                       "deletes":{"path":"../d","rows":1,"bytes":1}}]}}})",
                                 file);
    CHECK(code_of(del) == make_error_code(fdl_errc::bad_path));
    CHECK(message_of(del).starts_with("versions/x/files.json: tables.main.t.files[0].deletes.path: "));
}

TEST_CASE("rows, bytes and path are required, and counts are non-negative integers") {
    struct bad_case {
        std::string_view text;
        fdl_errc code;
    };
    for (auto const& c : {
             bad_case{R"({"tables":{"t":{"files":[{"path":"a","bytes":1}]}}})", fdl_errc::missing_field},
             bad_case{R"({"tables":{"t":{"files":[{"path":"a","rows":1}]}}})", fdl_errc::missing_field},
             bad_case{R"({"tables":{"t":{"files":[{"rows":1,"bytes":1}]}}})", fdl_errc::missing_field},
             bad_case{R"({"tables":{"t":{"files":[{"path":"a","rows":1,"bytes":-1}]}}})", fdl_errc::bad_value},
             bad_case{R"({"tables":{"t":{"files":[{"path":"a","rows":1.5,"bytes":1}]}}})", fdl_errc::bad_value},
             bad_case{R"({"tables":{"t":{"files":[{"path":"a","rows":1,"bytes":1,"footer_bytes":-8}]}}})",
                      fdl_errc::bad_value},
             bad_case{R"({"tables":{"t":{"files":[{"path":"a","rows":1,"bytes":"1"}]}}})", fdl_errc::wrong_type},
             bad_case{R"({"tables":{"t":{"files":[{"path":"a","rows":1,"bytes":1,"deletes":{"path":"d","rows":1}}]}}})",
                      fdl_errc::missing_field},
             bad_case{R"({"tables":{"t":{"files":[{"path":"a","rows":1,"bytes":1,"deletes":"d"}]}}})",
                      fdl_errc::wrong_type},
             bad_case{R"({"tables":{"t":{"files":["a"]}}})", fdl_errc::wrong_type},
             bad_case{R"({"tables":{"t":{"files":{}}}})", fdl_errc::wrong_type},
             bad_case{R"({"tables":{"t":[]}})", fdl_errc::wrong_type},
             bad_case{R"({"tables":{"t":{"renamed_columns":"yes"}}})", fdl_errc::wrong_type},
             bad_case{R"({"tables":[]})", fdl_errc::wrong_type},
             bad_case{R"({})", fdl_errc::missing_field},
             bad_case{R"([])", fdl_errc::wrong_type},
             bad_case{R"({"tables":{)", fdl_errc::bad_json},
         }) {
        CAPTURE(c.text);
        auto r = parse_files_index(c.text, file);
        CHECK(code_of(r) == make_error_code(c.code));
        CHECK(message_of(r).starts_with("versions/x/files.json: "));
    }
}

TEST_CASE("the position of a bad entry is named") {
    auto r = parse_files_index(
        R"({"tables":{"main.t":{"files":[{"path":"a","rows":1,"bytes":1},{"path":"b","rows":1}]}}})", file);
    CHECK(code_of(r) == make_error_code(fdl_errc::missing_field));
    CHECK(message_of(r).starts_with("versions/x/files.json: tables.main.t.files[1].bytes: "));
}

TEST_CASE("needed_files lists data and delete files once each, in order") {
    auto r = parse_files_index(R"({"tables":{
      "main.a":{"files":[{"path":"a/1.parquet","rows":1,"bytes":100,
                          "deletes":{"path":"a/1-del.parquet","rows":1,"bytes":7}},
                         {"path":"a/2.parquet","rows":1,"bytes":200}]},
      "main.b":{"files":[{"path":"a/2.parquet","rows":1,"bytes":200},
                         {"path":"b/1.parquet","rows":1,"bytes":300,
                          "deletes":{"path":"a/1-del.parquet","rows":1,"bytes":7}}]}}})",
                               file);
    INFO(message_of(r));
    REQUIRE(r.has_value());
    auto needed = needed_files(*r, file);
    INFO(message_of(needed));
    REQUIRE(needed.has_value());
    REQUIRE(needed->size() == 4);
    CHECK((*needed)[0].path == "a/1.parquet");
    CHECK((*needed)[0].bytes == 100u);
    CHECK((*needed)[1].path == "a/1-del.parquet");
    CHECK((*needed)[1].bytes == 7u);
    CHECK((*needed)[2].path == "a/2.parquet");
    CHECK((*needed)[2].bytes == 200u);
    CHECK((*needed)[3].path == "b/1.parquet");
    CHECK((*needed)[3].bytes == 300u);

    auto empty = needed_files(files_index{}, file);
    REQUIRE(empty.has_value());
    CHECK(empty->empty());
}

TEST_CASE("needed_files refuses the same path with two sizes") {
    files_index index;
    index.tables.push_back({"main.a", false, {entry("x.parquet", 10)}});
    index.tables.push_back({"main.b", false, {entry("y.parquet", 5), entry("x.parquet", 11)}});
    auto r = needed_files(index, file);
    CHECK(code_of(r) == make_error_code(fdl_errc::bad_value));
    CHECK(message_of(r).starts_with("versions/x/files.json: "));
    CHECK(message_of(r).find("x.parquet") != std::string::npos);

    // A delete file that collides with a data file of another size.
    files_index mixed;
    auto with_delete = entry("d.parquet", 1);
    with_delete.deletes = delete_file_entry{"x.parquet", 1, 99};
    mixed.tables.push_back({"main.a", false, {entry("x.parquet", 10), with_delete}});
    CHECK(code_of(needed_files(mixed, file)) == make_error_code(fdl_errc::bad_value));
}

TEST_CASE("files.json's tree is built within the memory it is given, never past it, and the index costs less") {
    std::string text = R"({"tables":{"main.t":{"files":[)";
    for (int i = 0; i < 20'000; ++i)
        text += std::string(i == 0 ? "" : ",") + R"({"path":"main/t/ducklake-)" + std::to_string(i) +
                R"(.parquet","rows":1,"bytes":2})";
    text += "]}}}";
    auto refused = mirror::fdl::parse_files_index(text, "versions/x/files.json", std::size_t{1} << 20);
    CHECK(code_of(refused) == make_error_code(mirror::fdl::fdl_errc::too_large));
    CHECK(message_of(refused) == "versions/x/files.json: parsed, it would take more than 1 MiB of memory, more than "
                                 "this process allows it (memory_limit)");
    auto index = mirror::fdl::parse_files_index(text, "versions/x/files.json", std::size_t{16} << 20);
    REQUIRE_MESSAGE(index.has_value(), message_of(index));
    REQUIRE(index->tables.at(0).files.size() == 20'000);
    CHECK(mirror::fdl::memory_bytes(*index) > 20'000 * sizeof(mirror::fdl::data_file_entry));
    CHECK(mirror::fdl::memory_bytes(*index) < 4 * text.size());
}
