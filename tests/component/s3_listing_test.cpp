// What an S3 listing hands on, whatever the server answers: only keys under the prefix that
// was asked for. A server that ignores the prefix (a bug, or a hostile one) must not make a
// pass see objects of another folder as this one's (found by tests/fuzz/s3_store_fuzz.cpp).

#include "core/store/s3_store.hpp"
#include "core/io/errors.hpp"
#include "core/sync/errors.hpp"
#include "core/sync/inventory.hpp"

#include "tests/support/fault_http_server.hpp"
#include "tests/support/run.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace mirror;
using namespace mirror::test;

namespace {

store::s3_store_settings settings_for(fault_http_server const& server) {
    store::s3_store_settings settings;
    settings.access.creds = {"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", std::nullopt};
    settings.access.region = "us-east-1";
    settings.access.endpoint = "http://127.0.0.1:" + std::to_string(server.port());
    settings.access.path_style = true;
    settings.allow_plain_http = true;
    return settings;
}

/// A page of one key that says another page follows, under `token`.
std::string endless_page(std::size_t n, std::string const& token) {
    return "<ListBucketResult><IsTruncated>true</IsTruncated><NextContinuationToken>" + token +
           "</NextContinuationToken><Contents><Key>lake/versions/k" + std::to_string(n) +
           "</Key><Size>1</Size></Contents></ListBucketResult>";
}

} // namespace

TEST_CASE("an S3 listing that never ends is cut, and says what cut it") {
    fault_http_server server;
    auto settings = settings_for(server);
    std::string expected;
    SUBCASE("a new token on every page: the page limit") {
        server.put_generated("/bucket/", [](std::size_t n) { return endless_page(n, "t" + std::to_string(n)); });
        settings.max_listing_pages = 50;
        expected = "more than 50 pages";
    }
    SUBCASE("a new token on every page: the time limit") {
        server.put_generated("/bucket/", [](std::size_t n) { return endless_page(n, "t" + std::to_string(n)); });
        settings.listing_time_limit = std::chrono::milliseconds(300);
        expected = "still listing after";
    }
    SUBCASE("the same token again") {
        server.put_generated("/bucket/", [](std::size_t n) { return endless_page(n, n < 5 ? "t" + std::to_string(n) : "t2"); });
        expected = "the same continuation token twice, after 5 pages";
    }
    SUBCASE("more keys than the limit") {
        server.put_generated("/bucket/", [](std::size_t n) { return endless_page(n, "t" + std::to_string(n)); });
        settings.max_listing_keys = 10;
        expected = "more than 10 keys";
    }
    SUBCASE("an unclosed, deeply nested page") {
        std::string deep = "<ListBucketResult><IsTruncated>false</IsTruncated>";
        for (int i = 0; i < 100'000; ++i)
            deep += "<Contents>";
        server.put("/bucket/", deep);
        expected = "not well-formed XML: elements nested deeper than 32";
    }
    SUBCASE("a page cut short") {
        server.put("/bucket/", "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>lake/versions/a</Key>");
        expected = "not well-formed XML: <Contents> is never closed";
    }
    event_loop run_on;
    auto s3 = store::s3_store::open("s3://bucket/lake/", settings);
    REQUIRE(s3.has_value());
    std::size_t keys = 0;
    std::function<result<void>(store::list_entry)> each = [&](store::list_entry) -> result<void> {
        ++keys;
        return {};
    };
    auto start = std::chrono::steady_clock::now();
    auto listed = run_on((*s3)->list("versions/", each));
    REQUIRE(!listed.has_value());
    CAPTURE(listed.error().message);
    CHECK(listed.error().code == io::store_errc::rejected);
    CHECK(listed.error().message.find(expected) != std::string::npos);
    CHECK(listed.error().message.find("versions/") != std::string::npos);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(60));
}

TEST_CASE("an S3 listing hands on only the keys under the prefix asked for, whatever the server lists") {
    std::string const page =
        "<ListBucketResult><IsTruncated>false</IsTruncated>"
        "<Contents><Key>lake/versions/019a/version.json</Key><Size>10</Size></Contents>"
        "<Contents><Key>lake/ve\xbdrsions/019a/files.json</Key><Size>1536</Size></Contents>"  // not under versions/
        "<Contents><Key>lake/refs/heads/main</Key><Size>36</Size></Contents>"                // another folder
        "<Contents><Key>other/versions/019a/version.json</Key><Size>10</Size></Contents>"    // another store
        "</ListBucketResult>";
    fault_http_server server({{"/bucket", page}, {"/bucket/", page}});
    event_loop run_on;
    auto s3 = store::s3_store::open("s3://bucket/lake/", settings_for(server));
    REQUIRE(s3.has_value());
    std::vector<std::string> keys;
    std::function<result<void>(store::list_entry)> each = [&](store::list_entry e) -> result<void> {
        keys.push_back(e.key);
        return {};
    };
    REQUIRE(run_on((*s3)->list("versions/", each)));
    CHECK(keys == std::vector<std::string>{"versions/019a/version.json"});
}

TEST_CASE("a listing of versions/ of a million long keys is refused for memory while it is read, not after") {
    // Issue 45: 1,000 pages of 1,000 long keys took sync to 1,253 MiB under
    // --memory-limit 48MiB: every key was kept before any limit applied.
    fault_http_server server;
    auto settings = settings_for(server);
    std::string const name(900, 'n');
    server.put_generated("/bucket/", [&](std::size_t n) {
        std::string page = "<ListBucketResult><IsTruncated>" + std::string(n < 1000 ? "true" : "false") +
                           "</IsTruncated><NextContinuationToken>t" + std::to_string(n) + "</NextContinuationToken>";
        for (int k = 0; k < 1000; ++k)
            page += "<Contents><Key>lake/versions/019a2f10-0c4d-7e88-a1b2-55c0d9e3f7aa/" + name + std::to_string(n) +
                    "-" + std::to_string(k) + "</Key><Size>1</Size></Contents>";
        return page + "</ListBucketResult>";
    });
    event_loop run_on;
    auto s3 = store::s3_store::open("s3://bucket/lake/", settings);
    REQUIRE(s3.has_value());
    auto listed = run_on(sync::list_versions(**s3, std::size_t{8} << 20));
    REQUIRE_FALSE(listed.has_value());
    CHECK(listed.error().code == sync::sync_errc::over_memory_limit);
    CHECK(listed.error().message.find("versions/: its listing would keep more than 8 MiB of memory") !=
          std::string::npos);
    // Refused at about 8 MiB of keys (some 8,000): on the ninth page or so, not the 1,000th.
    CHECK(server.requests().size() < 20);
}
