#include "core/fdl/repo_settings.hpp"
#include <doctest/doctest.h>

#include "core/fdl/errors.hpp"

#include <string>
#include <string_view>

using namespace mirror::fdl;
using boost::system::error_code;
using namespace std::string_view_literals;

namespace {

// result<T, mirror::error> cannot be printed by doctest: check through these.
error_code code_of(mirror::result<repo_settings> const& r) {
    return r ? error_code{} : r.error().code;
}
std::string message_of(mirror::result<repo_settings> const& r) {
    return r ? std::string("(parsed)") : r.error().message;
}

} // namespace

TEST_CASE("the layout page's example parses into every field") {
    auto r = parse_repo_settings(R"({
      "fdl": "0.1",
      "id": "5f0c8a52-6d3e-4f8e-9b1a-2c7d4e9f0a13",
      "data_dir": "data/",
      "signers": ["alice@example.org ssh-ed25519 AAAAC3xyz", "bob@example.org ssh-ed25519 AAAAC3abc"],
      "catalog_formats": [
        { "ducklake": "1.1" },
        { "ducklake": "1.0", "until": "2027-03-31" }
      ]
    })");
    INFO(message_of(r));
    REQUIRE(r.has_value());
    CHECK(r->fdl == "0.1");
    REQUIRE(r->id.has_value());
    CHECK(*r->id == "5f0c8a52-6d3e-4f8e-9b1a-2c7d4e9f0a13");
    CHECK(r->data_dir == "data/");
    REQUIRE(r->signers.size() == 2);
    CHECK(r->signers[0] == "alice@example.org ssh-ed25519 AAAAC3xyz");
    CHECK(r->signers[1] == "bob@example.org ssh-ed25519 AAAAC3abc");
    REQUIRE(r->catalog_formats.size() == 2);
    CHECK(r->catalog_formats[0].ducklake == "1.1");
    CHECK_FALSE(r->catalog_formats[0].until.has_value());
    CHECK(r->catalog_formats[1].ducklake == "1.0");
    REQUIRE(r->catalog_formats[1].until.has_value());
    CHECK(*r->catalog_formats[1].until == "2027-03-31");
}

TEST_CASE("a minimal fdl.json takes the defaults") {
    auto r = parse_repo_settings(R"({"fdl":"0.1"})");
    INFO(message_of(r));
    REQUIRE(r.has_value());
    CHECK(r->fdl == "0.1");
    CHECK(r->data_dir == "data/");
    CHECK_FALSE(r->id.has_value()); // "a repository without an id is still read"
    CHECK(r->signers.empty());
    CHECK(r->catalog_formats.empty());
}

TEST_CASE("another data_dir is kept as written") {
    auto r = parse_repo_settings(R"({"fdl":"0.2","data_dir":"lake/files/"})");
    INFO(message_of(r));
    REQUIRE(r.has_value());
    CHECK(r->data_dir == "lake/files/");
    CHECK(r->fdl == "0.2"); // another minor version of major 0 is read
}

TEST_CASE("unknown fields are ignored, whatever their type") {
    auto r = parse_repo_settings(
        R"({"fdl":"0.1","retention":{"days":[1,2,{"x":null}]},"future":true,"n":1.5,"s":"x","data_dir":"d/"})");
    INFO(message_of(r));
    REQUIRE(r.has_value());
    CHECK(r->data_dir == "d/");
}

TEST_CASE("an unknown major version is refused, naming the field") {
    for (std::string_view text : {R"({"fdl":"1.0"})", R"({"fdl":"2.3","data_dir":"data/"})", R"({"fdl":"10.0"})"}) {
        CAPTURE(text);
        auto r = parse_repo_settings(text);
        CHECK(code_of(r) == make_error_code(fdl_errc::unknown_major_version));
        CHECK(message_of(r).starts_with("fdl.json: fdl:"));
    }
}

TEST_CASE("major_version_of reads the number before the first dot") {
    CHECK(major_version_of("0.1") == 0);
    CHECK(major_version_of("1.0") == 1);
    CHECK(major_version_of("12.34") == 12);
    for (std::string_view bad : {"", ".1", "x.1", "v0.1", " 0.1", "0a.1", "+0.1", "-0.1", "-1.0"}) {
        CAPTURE(bad);
        CHECK_FALSE(major_version_of(bad).has_value());
    }
}

TEST_CASE("a malformed or missing fdl field is refused") {
    CHECK(code_of(parse_repo_settings(R"({})")) == make_error_code(fdl_errc::missing_field));
    CHECK(message_of(parse_repo_settings(R"({})")).starts_with("fdl.json: fdl:"));
    CHECK(code_of(parse_repo_settings(R"({"fdl":0.1})")) == make_error_code(fdl_errc::wrong_type));
    CHECK(code_of(parse_repo_settings(R"({"fdl":"latest"})")) == make_error_code(fdl_errc::bad_value));
    // A signed major is not a version number, and must not pass as major 0.
    CHECK_FALSE(parse_repo_settings(R"({"fdl":"-0.1"})").has_value());
}

TEST_CASE("an unsafe data_dir is refused as bad_path") {
    for (std::string_view text : {R"({"fdl":"0.1","data_dir":"data"})", R"({"fdl":"0.1","data_dir":"/data/"})",
                                  R"({"fdl":"0.1","data_dir":"../d/"})", R"({"fdl":"0.1","data_dir":""})",
                                  R"({"fdl":"0.1","data_dir":"a\\b/"})", R"({"fdl":"0.1","data_dir":"d\u0000/"})",
                                  R"({"fdl":"0.1","data_dir":"d\n/"})", R"({"fdl":"0.1","data_dir":"s3://b/d/"})"}) {
        CAPTURE(text);
        auto r = parse_repo_settings(text);
        CHECK(code_of(r) == make_error_code(fdl_errc::bad_path));
        CHECK(message_of(r).starts_with("fdl.json: data_dir:"));
    }
}

TEST_CASE("fields of the wrong type are refused") {
    for (std::string_view text : {
             R"({"fdl":"0.1","id":42})",
             R"({"fdl":"0.1","id":null})",
             R"({"fdl":"0.1","data_dir":["data/"]})",
             R"({"fdl":"0.1","signers":"alice ssh-ed25519 AAAA"})",
             R"({"fdl":"0.1","signers":{}})",
             R"({"fdl":"0.1","signers":["ok", 7]})",
             R"({"fdl":"0.1","catalog_formats":{"ducklake":"1.0"}})",
             R"({"fdl":"0.1","catalog_formats":["1.0"]})",
             R"({"fdl":"0.1","catalog_formats":[{"ducklake":1.0}]})",
             R"({"fdl":"0.1","catalog_formats":[{"ducklake":"1.0","until":20270331}]})",
         }) {
        CAPTURE(text);
        CHECK(code_of(parse_repo_settings(text)) == make_error_code(fdl_errc::wrong_type));
    }
    auto r = parse_repo_settings(R"({"fdl":"0.1","id":42})");
    CHECK(message_of(r).starts_with("fdl.json: id:"));
    r = parse_repo_settings(R"({"fdl":"0.1","signers":"x"})");
    CHECK(message_of(r).starts_with("fdl.json: signers:"));
}

TEST_CASE("an empty id is refused") {
    CHECK(code_of(parse_repo_settings(R"({"fdl":"0.1","id":""})")) == make_error_code(fdl_errc::bad_value));
}

TEST_CASE("catalog_formats entries must be safe single file-name segments") {
    for (std::string_view text : {R"({"fdl":"0.1","catalog_formats":[{"ducklake":"1.0/x"}]})",
                                  R"({"fdl":"0.1","catalog_formats":[{"ducklake":"../1.0"}]})",
                                  R"({"fdl":"0.1","catalog_formats":[{"ducklake":".."}]})",
                                  R"({"fdl":"0.1","catalog_formats":[{"ducklake":""}]})",
                                  R"({"fdl":"0.1","catalog_formats":[{"ducklake":"1.1"},{"ducklake":"a\\b"}]})"}) {
        CAPTURE(text);
        auto r = parse_repo_settings(text);
        CHECK(code_of(r) == make_error_code(fdl_errc::bad_path));
        CHECK(message_of(r).starts_with("fdl.json: catalog_formats"));
    }
    CHECK(code_of(parse_repo_settings(R"({"fdl":"0.1","catalog_formats":[{"until":"2027-01-01"}]})")) ==
          make_error_code(fdl_errc::missing_field));
}

TEST_CASE("text that is not one JSON value is refused as bad_json") {
    for (std::string_view text : {""sv, "   "sv, R"({"fdl":"0.1")"sv, R"({"fdl":"0.)"sv, R"({"fdl":"0.1",})"sv,
                                  R"({"fdl":"0.1"} {})"sv, R"({"fdl":"0.1"}x)"sv, "{\"fdl\":\"0.1\"}\0"sv,
                                  R"({fdl:"0.1"})"sv, R"({'fdl':'0.1'})"sv}) {
        CAPTURE(text.size());
        auto r = parse_repo_settings(text);
        CHECK(code_of(r) == make_error_code(fdl_errc::bad_json));
        CHECK(message_of(r).starts_with("fdl.json:"));
    }
}

TEST_CASE("JSON that is not an object is refused") {
    for (std::string_view text : {R"([])", R"("0.1")", R"(null)", R"(0)", R"([{"fdl":"0.1"}])"}) {
        CAPTURE(text);
        auto r = parse_repo_settings(text);
        CHECK(code_of(r) == make_error_code(fdl_errc::wrong_type));
        CHECK(message_of(r).starts_with("fdl.json:"));
    }
}

TEST_CASE("deep nesting is refused as bad_json, without exhausting the stack") {
    CHECK(code_of(parse_repo_settings(std::string(10000, '['))) == make_error_code(fdl_errc::bad_json));
    std::string balanced = R"({"fdl":"0.1","x":)" + std::string(100000, '[') + std::string(100000, ']') + "}";
    CHECK(code_of(parse_repo_settings(balanced)) == make_error_code(fdl_errc::bad_json));
    std::string objects = R"({"fdl":"0.1","x":)";
    for (int i = 0; i < 5000; ++i)
        objects += R"({"a":)";
    objects += "1" + std::string(5000, '}') + "}";
    CHECK(code_of(parse_repo_settings(objects)) == make_error_code(fdl_errc::bad_json));
    // A few levels are fine.
    CHECK(parse_repo_settings(R"({"fdl":"0.1","x":[[[[{"a":[1]}]]]]})").has_value());
}

TEST_CASE("invalid UTF-8 is refused as bad_json, in a value or in a key") {
    for (std::string_view text : {"{\"fdl\":\"0.1\",\"x\":\"\xff\"}"sv, "{\"fdl\":\"0.1\",\"\xc0\xaf\":1}"sv,
                                  "{\"fdl\":\"0.1\",\"x\":\"\xed\xa0\x80\"}"sv,
                                  "{\"fdl\":\"0.1\",\"data_dir\":\"d\xe2\x82/\"}"sv}) {
        CAPTURE(text.size());
        CHECK(code_of(parse_repo_settings(text)) == make_error_code(fdl_errc::bad_json));
    }
    // Valid UTF-8 is fine.
    auto r = parse_repo_settings("{\"fdl\":\"0.1\",\"data_dir\":\"donn\xc3\xa9" "es/\"}");
    INFO(message_of(r));
    REQUIRE(r.has_value());
    CHECK(r->data_dir == "donn\xc3\xa9" "es/");
}
