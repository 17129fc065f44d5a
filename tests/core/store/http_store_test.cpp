// What an HTTP origin store takes back from outside the process (restore): the request
// and answer side is in tests/component/http_store_restore_test.cpp, against nginx.

#include "core/store/http_store.hpp"

#include <doctest/doctest.h>

using namespace mirror;
using store::remembered_object;

namespace {

/// A store that is never asked anything: open() makes no request.
std::unique_ptr<store::http_store> unused_store(std::size_t object_cap = 100, std::size_t total_cap = 250) {
    store::http_store_settings settings;
    settings.allow_plain_http = true;
    settings.remembered_object_bytes = object_cap;
    settings.remembered_total_bytes = total_cap;
    auto opened = store::http_store::open("http://127.0.0.1:1/repo/", settings);
    REQUIRE(opened.has_value());
    return std::move(*opened);
}

} // namespace

TEST_CASE("http_store: restored objects are remembered as given, by key") {
    auto s = unused_store();
    CHECK(s->remembered_objects().empty());
    std::vector<remembered_object> given = {{"refs.json", "If-None-Match", "\"r\"", "{}"},
                                            {"HEAD", "If-Modified-Since", "Tue, 14 Nov 2023 22:13:20 GMT", ""},
                                            {"fdl.json", "If-None-Match", "W/\"f\"", std::string(100, 'f')}};
    s->restore(given);
    CHECK(s->remembered_objects() == std::vector<remembered_object>{given[1], given[2], given[0]});
}

TEST_CASE("http_store: restore skips unsafe keys, other headers and validators that would split a request") {
    auto s = unused_store();
    s->restore({{"../etc/passwd", "If-None-Match", "\"a\"", "x"},
                {"/fdl.json", "If-None-Match", "\"a\"", "x"},
                {"", "If-None-Match", "\"a\"", "x"},
                {"a//b", "If-None-Match", "\"a\"", "x"},
                {"fdl.json", "Authorization", "Bearer x", "x"},
                {"fdl.json", "if-none-match", "\"a\"", "x"}, // as remember() writes it, exactly
                {"fdl.json", "If-None-Match", "", "x"},
                {"fdl.json", "If-None-Match", "\"a\"\r\nX-Injected: 1", "x"},
                {"fdl.json", "If-None-Match", std::string("\"a\0\"", 4), "x"},
                {"fdl.json", "If-None-Match", "\"\xe9\"", "x"}});
    CHECK(s->remembered_objects().empty());
}

TEST_CASE("http_store: restore keeps to the per-object and total caps, in the given order") {
    auto s = unused_store(100, 250);
    s->restore({{"refs/heads/a", "If-None-Match", "\"a\"", std::string(101, 'a')}, // over the per-object cap
                {"refs/heads/b", "If-None-Match", "\"b\"", std::string(100, 'b')},
                {"refs/heads/c", "If-None-Match", "\"c\"", std::string(100, 'c')},
                {"refs/heads/d", "If-None-Match", "\"d\"", std::string(60, 'd')}, // 260 > 250: full
                {"refs/heads/e", "If-None-Match", "\"e\"", std::string(50, 'e')}});
    std::vector<std::string> keys;
    for (auto const& object : s->remembered_objects())
        keys.push_back(object.key);
    CHECK(keys == std::vector<std::string>{"refs/heads/b", "refs/heads/c", "refs/heads/e"});
}

TEST_CASE("http_store: restore keeps a repository's records and refs, never its data files or catalogs") {
    auto s = unused_store();
    s->restore({{"data/main/part-1.parquet", "If-None-Match", "\"p\"", "PAR1"},
                {"versions/019a/ducklake.duckdb", "If-None-Match", "\"c\"", "catalog"},
                {"versions/019a/catalogs/1.0.duckdb", "If-None-Match", "\"c\"", "catalog"},
                {"notes.txt", "If-None-Match", "\"n\"", "not a repository file"},
                {"versions/019a/version.json", "If-None-Match", "\"v\"", "{}"},
                {"versions/019a/version.json.sig", "If-None-Match", "\"s\"", "sig"},
                {"refs/tags/v1", "If-None-Match", "\"t\"", "019a"},
                {"HEAD", "If-None-Match", "\"h\"", "ref: refs/heads/main"}});
    std::vector<std::string> keys;
    for (auto const& object : s->remembered_objects())
        keys.push_back(object.key);
    CHECK(keys == std::vector<std::string>{"HEAD", "refs/tags/v1", "versions/019a/version.json",
                                           "versions/019a/version.json.sig"});
}

TEST_CASE("http_store: restore does not replace what the store already remembers") {
    auto s = unused_store();
    s->restore({{"HEAD", "If-None-Match", "\"new\"", "ref: refs/heads/main\n"}});
    s->restore({{"HEAD", "If-None-Match", "\"old\"", "ref: refs/heads/old\n"},
                {"HEAD", "If-None-Match", "\"older\"", "ref: refs/heads/older\n"}});
    REQUIRE(s->remembered_objects().size() == 1);
    CHECK(s->remembered_objects()[0].validator == "\"new\"");
}
