#include "core/fdl/version_record.hpp"
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

constexpr std::string_view file = "versions/x/version.json";
constexpr char const* id = "019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c";
constexpr char const* parent = "019a2f10-0c4d-7e88-a1b2-55c0d9e3f7aa";
constexpr char const* catalog_hex = "9f2c000000000000000000000000000000000000000000000000000000000001";

// The spec's example (spec/versions.en.md), with real digests. `@PARENTS@` and `@EXTRA@`
// are replaced per test.
constexpr std::string_view example = R"({
  "fdl": "0.1",
  "id": "019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c",
  "seq": 12,
  "parents": @PARENTS@,
  "created_at": "2026-10-30T09:00:00Z",
  "author": { "name": "example" },
  "message": "Add the final 2025 figures",
  "catalog": {
    "path": "ducklake.duckdb",
    "storage": "duckdb-v1.5.0",
    "bytes": 4194304,
    "sha256": "9f2c000000000000000000000000000000000000000000000000000000000001"
  },
  "dataset": { "path": "dataset.json", "bytes": 2048,
               "sha256": "4c1d000000000000000000000000000000000000000000000000000000000002" },
  "ducklake": { "format": "1.0", "snapshot_id": 345, "snapshots": [301, 345] },
  "files": { "path": "files.json", "bytes": 1536,
             "sha256": "7a0e000000000000000000000000000000000000000000000000000000000003" },
  "changes": [ { "table": "main.population", "kind": "add_column", "column": "note", "breaking": false } ],
  "inputs": [ { "source_id": "example:population-2025", "sha256": "1b7e…" } ]@EXTRA@
})";

std::string replaced(std::string text, std::string_view what, std::string_view with) {
    auto at = text.find(what);
    REQUIRE(at != std::string::npos);
    return text.replace(at, what.size(), with);
}

std::string version_json(std::string_view parents = R"(["019a2f10-0c4d-7e88-a1b2-55c0d9e3f7aa"])",
                         std::string_view extra = R"(, "annotations": {})") {
    return replaced(replaced(std::string(example), "@PARENTS@", parents), "@EXTRA@", extra);
}

// A minimal record with one extra top-level member (for one field at a time).
std::string minimal(std::string_view member) {
    return std::string(R"({"fdl":"0.1","id":"019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c")") +
           (member.empty() ? "" : ",") + std::string(member) + "}";
}

} // namespace

TEST_CASE("the spec's example parses") {
    auto r = parse_version_record(version_json(), file);
    INFO(message_of(r));
    REQUIRE(r.has_value());
    CHECK(r->id == id);
    CHECK(r->seq == 12u);
    REQUIRE(r->parents.size() == 1);
    CHECK(r->parents[0] == parent);
    CHECK(r->first_parent() == std::optional<std::string>(parent));
    CHECK(r->created_at == std::optional<std::string>("2026-10-30T09:00:00Z"));

    REQUIRE(r->catalog.has_value());
    CHECK(r->catalog->path == "ducklake.duckdb");
    CHECK(r->catalog->bytes == 4194304u);
    CHECK(mirror::verify::to_hex(r->catalog->sha256) == catalog_hex);
    REQUIRE(r->dataset.has_value());
    CHECK(r->dataset->path == "dataset.json");
    CHECK(r->dataset->bytes == 2048u);
    CHECK(r->dataset->sha256[0] == 0x4c);
    CHECK(r->dataset->sha256[31] == 0x02);
    REQUIRE(r->files.has_value());
    CHECK(r->files->path == "files.json");
    CHECK(r->files->bytes == 1536u);
    CHECK(r->files->sha256[31] == 0x03);

    REQUIRE(r->ducklake.has_value());
    CHECK(r->ducklake->format == "1.0");
    CHECK(r->ducklake->snapshot_id == 345u);
    CHECK(r->ducklake->snapshots == std::vector<std::uint64_t>{301, 345});
}

TEST_CASE("parents of any length, and history follows the first") {
    auto root = parse_version_record(version_json("[]"), file);
    REQUIRE(root.has_value());
    CHECK(root->parents.empty());
    CHECK_FALSE(root->first_parent().has_value());

    auto three = parse_version_record(version_json(R"(["019a2f10-0c4d-7e88-a1b2-55c0d9e3f7aa",
        "019a1000-0000-7000-8000-000000000001", "019a1000-0000-7000-b000-000000000002"])"),
                                      file);
    INFO(message_of(three));
    REQUIRE(three.has_value());
    CHECK(three->parents == std::vector<std::string>{parent, "019a1000-0000-7000-8000-000000000001",
                                                     "019a1000-0000-7000-b000-000000000002"});
    CHECK(three->first_parent() == std::optional<std::string>(parent));

    auto absent = parse_version_record(minimal(""), file);
    REQUIRE(absent.has_value());
    CHECK(absent->parents.empty());
    CHECK_FALSE(absent->catalog.has_value()); // a withdrawn version may lack it
    CHECK_FALSE(absent->seq.has_value());
}

TEST_CASE("extensions is accepted like annotations, and both must be objects") {
    auto const with_extensions = version_json("[]", R"(, "extensions": {"x": 1})");
    CHECK(parse_version_record(with_extensions, file).has_value());
    CHECK(parse_version_record(version_json("[]", ""), file).has_value());
    for (std::string_view member : {R"("annotations": [])", R"("extensions": "x")", R"("extensions": 1)"}) {
        CAPTURE(member);
        auto r = parse_version_record(minimal(member), file);
        CHECK(code_of(r) == make_error_code(fdl_errc::wrong_type));
        CHECK(message_of(r).starts_with("versions/x/version.json: "));
    }
}

TEST_CASE("messages name the file and the field exactly") {
    auto bad_digest = parse_version_record(
        replaced(version_json(), "9f2c000000000000000000000000000000000000000000000000000000000001", "9f2c…"), file);
    CHECK(code_of(bad_digest) == make_error_code(fdl_errc::bad_value));
    CHECK(message_of(bad_digest) == "versions/x/version.json: catalog.sha256: not 64 lower-case hex digits");

    auto upper = parse_version_record(
        replaced(version_json(), "7a0e000000000000000000000000000000000000000000000000000000000003",
                 "7A0E000000000000000000000000000000000000000000000000000000000003"),
        file);
    CHECK(code_of(upper) == make_error_code(fdl_errc::bad_value));
    CHECK(message_of(upper) == "versions/x/version.json: files.sha256: not 64 lower-case hex digits");

    auto missing_bytes = parse_version_record(replaced(version_json(), R"("bytes": 2048,)", ""), file);
    CHECK(code_of(missing_bytes) == make_error_code(fdl_errc::missing_field));
    CHECK(message_of(missing_bytes).starts_with("versions/x/version.json: dataset.bytes: "));
}

TEST_CASE("the id is required and must be a UUIDv7") {
    auto missing = parse_version_record(R"({"fdl":"0.1","parents":[]})", file);
    CHECK(code_of(missing) == make_error_code(fdl_errc::missing_field));
    CHECK(message_of(missing).starts_with("versions/x/version.json: id: "));

    for (std::string_view bad_id : {"019A3C4E-7B21-7F3A-9C55-2F0D8E1A4B6C", "550e8400-e29b-41d4-a716-446655440000",
                                    "019a3c4e7b217f3a9c552f0d8e1a4b6c", ""}) {
        CAPTURE(bad_id);
        auto r = parse_version_record(replaced(version_json(), id, bad_id), file);
        CHECK(code_of(r) == make_error_code(fdl_errc::bad_version_id));
        CHECK(message_of(r).starts_with("versions/x/version.json: id: "));
    }
    CHECK(code_of(parse_version_record(replaced(version_json(), R"("019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c")", "7"),
                                       file)) == make_error_code(fdl_errc::wrong_type));
}

TEST_CASE("every parent must be a UUIDv7 other than the version itself") {
    for (std::string_view parents :
         {R"(["019A2F10-0C4D-7E88-A1B2-55C0D9E3F7AA"])", R"(["019a2f10-0c4d-7e88-a1b2-55c0d9e3f7aa", "x"])",
          R"(["550e8400-e29b-41d4-a716-446655440000"])", R"([1])", R"([null])"}) {
        CAPTURE(parents);
        auto r = parse_version_record(version_json(parents), file);
        CHECK(code_of(r) == make_error_code(fdl_errc::bad_version_id));
        CHECK(message_of(r).starts_with("versions/x/version.json: parents: "));
    }
    auto self = parse_version_record(version_json(R"(["019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c"])"), file);
    CHECK_FALSE(self.has_value());
    CHECK(message_of(self).starts_with("versions/x/version.json: parents: "));
    auto later = parse_version_record(
        version_json(R"(["019a2f10-0c4d-7e88-a1b2-55c0d9e3f7aa", "019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c"])"), file);
    CHECK_FALSE(later.has_value());

    CHECK(code_of(parse_version_record(version_json(R"("019a2f10-0c4d-7e88-a1b2-55c0d9e3f7aa")"), file)) ==
          make_error_code(fdl_errc::wrong_type));
}

TEST_CASE("pinned paths must stay inside the version folder") {
    for (std::string_view path : {"../x", "/abs", "a/../../x", "./ducklake.duckdb", "a\\\\b", "", "s3://b/x",
                                  "catalogs/", "version.json", "version.json.sig"}) {
        CAPTURE(path);
        auto r = parse_version_record(
            replaced(version_json(), R"("path": "ducklake.duckdb")", R"("path": ")" + std::string(path) + "\""), file);
        CHECK(code_of(r) == make_error_code(fdl_errc::bad_path));
        CHECK(message_of(r).starts_with("versions/x/version.json: catalog.path: "));
    }
    auto nested = parse_version_record(
        replaced(version_json(), R"("path": "ducklake.duckdb")", R"("path": "catalogs/1.0.duckdb")"), file);
    REQUIRE(nested.has_value());
    CHECK(nested->catalog->path == "catalogs/1.0.duckdb");
}

TEST_CASE("bytes must be a non-negative integer") {
    for (std::string_view bytes : {"-1", "1.5", "4194304.5", "18446744073709551616"}) {
        CAPTURE(bytes);
        auto r = parse_version_record(replaced(version_json(), "4194304", bytes), file);
        CHECK(code_of(r) == make_error_code(fdl_errc::bad_value));
        CHECK(message_of(r).starts_with("versions/x/version.json: catalog.bytes: "));
    }
    for (std::string_view bytes : {R"("4194304")", "null", "true"}) {
        CAPTURE(bytes);
        auto r = parse_version_record(replaced(version_json(), "4194304", bytes), file);
        CHECK(code_of(r) == make_error_code(fdl_errc::wrong_type));
    }
    auto largest = parse_version_record(replaced(version_json(), "4194304", "18446744073709551615"), file);
    REQUIRE(largest.has_value());
    CHECK(largest->catalog->bytes == 18446744073709551615u);
    auto zero = parse_version_record(replaced(version_json(), "4194304", "0"), file);
    REQUIRE(zero.has_value());
    CHECK(zero->catalog->bytes == 0u);
    CHECK(code_of(parse_version_record(replaced(version_json(), R"("seq": 12)", R"("seq": -12)"), file)) ==
          make_error_code(fdl_errc::bad_value));
}

TEST_CASE("an unknown major version is refused, a known one with another minor is read") {
    auto r = parse_version_record(replaced(version_json(), R"("fdl": "0.1")", R"("fdl": "1.0")"), file);
    CHECK(code_of(r) == make_error_code(fdl_errc::unknown_major_version));
    CHECK(message_of(r).starts_with("versions/x/version.json: fdl: "));
    CHECK(parse_version_record(replaced(version_json(), R"("fdl": "0.1")", R"("fdl": "0.9")"), file).has_value());
    CHECK(code_of(parse_version_record(R"({"id":"019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c"})", file)) ==
          make_error_code(fdl_errc::missing_field));
}

TEST_CASE("malformed text is refused without crashing") {
    CHECK(code_of(parse_version_record(version_json().substr(0, 200), file)) == make_error_code(fdl_errc::bad_json));
    CHECK(code_of(parse_version_record(std::string(10000, '['), file)) == make_error_code(fdl_errc::bad_json));
    CHECK(code_of(parse_version_record("[]", file)) == make_error_code(fdl_errc::wrong_type));
    CHECK(message_of(parse_version_record("", file)).starts_with("versions/x/version.json: "));
}

TEST_CASE("check_record_folder compares the id with its folder") {
    auto r = parse_version_record(version_json(), file);
    REQUIRE(r.has_value());
    CHECK(check_record_folder(*r, id, file).has_value());
    auto other = check_record_folder(*r, parent, file);
    CHECK(code_of(other) == make_error_code(fdl_errc::id_mismatch));
    CHECK(message_of(other).starts_with("versions/x/version.json: "));
    CHECK(code_of(check_record_folder(*r, "019A3C4E-7B21-7F3A-9C55-2F0D8E1A4B6C", file)) ==
          make_error_code(fdl_errc::id_mismatch));
}
