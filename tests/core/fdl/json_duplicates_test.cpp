#include "core/fdl/detail/json_duplicates.hpp"
#include <doctest/doctest.h>

#include "core/coord/lease.hpp"
#include "core/fdl/errors.hpp"
#include "core/fdl/refs.hpp"
#include "core/fdl/repo_settings.hpp"
#include "core/fdl/version_record.hpp"

using namespace mirror;
using mirror::fdl::detail::duplicate_json_key;

TEST_CASE("a key twice in one object is found, wherever the object lies, after escapes are decoded") {
    CHECK(!duplicate_json_key(R"({"a":1,"b":{"a":2},"c":[{"a":1},{"a":2}]})"));
    CHECK(duplicate_json_key(R"({"a":1,"a":2})") == "a");
    CHECK(duplicate_json_key(R"({"a":1,"\u0061":2})") == "a");
    CHECK(duplicate_json_key(R"({"x":{"y":[{"z":1,"z":1}]}})") == "x.y.z");
    CHECK(duplicate_json_key(R"({"refs":{"refs/heads/main":"1","refs/heads/main":"2"}})") == "refs.refs/heads/main");
    CHECK(!duplicate_json_key("not json"));
}

TEST_CASE("records with a key twice are refused, so that no two parsers read one record two ways") {
    auto refused = [](auto const& parsed) {
        REQUIRE(!parsed.has_value());
        CHECK(parsed.error().message.find("appears twice in one object") != std::string::npos);
    };
    refused(fdl::parse_repo_settings(R"({"fdl":"0.1","id":"a","id":"b"})"));
    refused(fdl::parse_refs_json(R"({"refs":{"refs/heads/main":"019a2f10-0c4d-7e88-a1b2-55c0d9e3f7aa",)"
                                 R"("refs/heads/main":"019a2f10-0c4d-7e88-a1b2-55c0d9e3f7ab"}})"));
    refused(coord::parse_lease(R"({"holder":"a/1","token":1,"token":9,"expires":0,"since":0})", "lease"));
    auto record = fdl::parse_version_record(
        R"({"id":"019a2f10-0c4d-7e88-a1b2-55c0d9e3f7aa","id":"019a2f10-0c4d-7e88-a1b2-55c0d9e3f7ab"})",
        "versions/019a2f10-0c4d-7e88-a1b2-55c0d9e3f7aa/version.json");
    refused(record);
    CHECK(record.error().code == fdl::fdl_errc::bad_json);
}
