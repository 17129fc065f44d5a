// What an S3 listing hands on, whatever the server answers: only keys under the prefix that
// was asked for. A server that ignores the prefix (a bug, or a hostile one) must not make a
// pass see objects of another folder as this one's (found by tests/fuzz/s3_store_fuzz.cpp).

#include "core/store/s3_store.hpp"

#include "tests/support/fault_http_server.hpp"
#include "tests/support/run.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace mirror;
using namespace mirror::test;

TEST_CASE("an S3 listing hands on only the keys under the prefix asked for, whatever the server lists") {
    std::string const page =
        "<ListBucketResult><IsTruncated>false</IsTruncated>"
        "<Contents><Key>lake/versions/019a/version.json</Key><Size>10</Size></Contents>"
        "<Contents><Key>lake/ve\xbdrsions/019a/files.json</Key><Size>1536</Size></Contents>"  // not under versions/
        "<Contents><Key>lake/refs/heads/main</Key><Size>36</Size></Contents>"                // another folder
        "<Contents><Key>other/versions/019a/version.json</Key><Size>10</Size></Contents>"    // another store
        "</ListBucketResult>";
    fault_http_server server({{"/bucket", page}, {"/bucket/", page}});
    store::s3_store_settings settings;
    settings.access.creds = {"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", std::nullopt};
    settings.access.region = "us-east-1";
    settings.access.endpoint = "http://127.0.0.1:" + std::to_string(server.port());
    settings.access.path_style = true;
    settings.allow_plain_http = true;
    event_loop run_on;
    auto s3 = store::s3_store::open("s3://bucket/lake/", settings);
    REQUIRE(s3.has_value());
    std::vector<std::string> keys;
    std::function<result<void>(store::list_entry)> each = [&](store::list_entry e) -> result<void> {
        keys.push_back(e.key);
        return {};
    };
    REQUIRE(run_on((*s3)->list("versions/", each)));
    CHECK(keys == std::vector<std::string>{"versions/019a/version.json"});
}
