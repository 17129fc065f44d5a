// What an HTTP origin store remembers survives a restart: a store restored from another's
// remembered_objects(), directly or through the daemon's state folder, rereads with 304s
// from a real nginx, and a changed object is still read in full.

#include "core/store/http_store.hpp"

#include "daemon/state/state_file.hpp"
#include "tests/support/nginx.hpp"
#include "tests/support/publisher.hpp"
#include "tests/support/run.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <ctime>
#include <set>
#include <sys/stat.h>

using namespace mirror;
using namespace mirror::test;
namespace fs = std::filesystem;

namespace {

/// The objects a quick pass rereads, served by nginx over plain HTTP.
struct small_origin {
    temp_dir tmp;
    std::map<std::string, std::string> files = {{"fdl.json", "{\"fdl\": \"0.1\"}\n"},
                                                {"HEAD", "ref: refs/heads/main\n"},
                                                {"refs.json", "{\"refs/heads/main\": \"019a\"}\n"}};
    bool written = [this] {
        for (auto const& [name, bytes] : files)
            write_file(tmp / "origin" / name, bytes);
        return true;
    }();
    nginx_server nginx{nginx_options{tmp / "origin"}};
    event_loop run_on;

    std::unique_ptr<store::http_store> open() {
        store::http_store_settings settings;
        settings.allow_plain_http = true;
        auto opened = store::http_store::open(nginx.url(), settings);
        REQUIRE(opened.has_value());
        return std::move(*opened);
    }
    std::string read(store::http_store& from, std::string const& key) {
        auto text = run_on(store::read_all(from, key, 1024 * 1024));
        REQUIRE_MESSAGE(text.has_value(), (text ? "" : text.error().message));
        return *text;
    }
    /// A store that has read every file once, as a daemon before its restart.
    std::unique_ptr<store::http_store> warmed() {
        auto first = open();
        for (auto const& [name, bytes] : files)
            CHECK(read(*first, name) == bytes);
        CHECK(first->counts().not_modified == 0);
        CHECK(first->remembered_objects().size() == files.size());
        return first;
    }
};

/// A file's modification time as an HTTP date (RFC 9110, section 5.6.7), as nginx sends
/// it in Last-Modified.
std::string http_date_of(fs::path const& path) {
    struct stat about {};
    REQUIRE(::stat(path.c_str(), &about) == 0);
    std::tm utc{};
    ::gmtime_r(&about.st_mtime, &utc);
    char text[64];
    std::strftime(text, sizeof text, "%a, %d %b %Y %H:%M:%S GMT", &utc);
    return text;
}

/// The ETag nginx sends for a file: its modification time and size in hexadecimal.
std::string nginx_etag_of(fs::path const& path) {
    struct stat about {};
    REQUIRE(::stat(path.c_str(), &about) == 0);
    char text[64];
    std::snprintf(text, sizeof text, "\"%llx-%llx\"", static_cast<unsigned long long>(about.st_mtime),
                  static_cast<unsigned long long>(about.st_size));
    return text;
}

} // namespace

TEST_CASE_FIXTURE(small_origin, "http_store: a store restored from another's remembered objects rereads with 304s") {
    auto first = warmed();
    auto second = open();
    second->restore(first->remembered_objects());
    for (auto const& [name, bytes] : files)
        CHECK(read(*second, name) == bytes);
    INFO(nginx.access_log());
    CHECK(second->counts().requests == files.size());
    CHECK(second->counts().not_modified == files.size());
}

TEST_CASE_FIXTURE(small_origin, "http_store: remembered objects kept in a state folder across a restart answer 304") {
    {
        auto first = warmed();
        auto dir = daemon::state_dir::open(tmp / "state");
        REQUIRE(dir.has_value());
        daemon::repository_state state;
        state.origin = first->describe();
        state.origin_cache = first->remembered_objects();
        REQUIRE(dir->save("small", state).has_value());
    }
    auto dir = daemon::state_dir::open(tmp / "state");
    REQUIRE(dir.has_value());
    std::string warning;
    auto state = dir->load("small", &warning);
    CHECK(warning.empty());
    auto second = open();
    REQUIRE(state.origin == second->describe());
    second->restore(state.origin_cache);
    for (auto const& [name, bytes] : files)
        CHECK(read(*second, name) == bytes);
    CHECK(second->counts().not_modified == files.size());
}

TEST_CASE_FIXTURE(small_origin, "http_store: a 200 replaces a restored object, and the next reread is a 304 for the new bytes") {
    auto first = warmed();
    auto second = open();
    second->restore(first->remembered_objects());
    std::string changed = "{\"refs/heads/main\": \"019b\", \"refs/tags/v1\": \"019a\"}\n"; // new size: new ETag
    write_file(tmp / "origin" / "refs.json", changed);

    CHECK(read(*second, "refs.json") == changed);
    CHECK(second->counts().not_modified == 0);
    CHECK(read(*second, "refs.json") == changed);
    CHECK(second->counts().not_modified == 1);
    for (auto const& object : second->remembered_objects())
        if (object.key == "refs.json")
            CHECK(object.bytes == changed);
}

TEST_CASE_FIXTURE(small_origin, "http_store: a restored validator the origin does not know costs one full read, not wrong bytes") {
    auto second = open();
    second->restore({{"HEAD", "If-None-Match", "\"not-an-etag-of-nginx\"", "ref: refs/heads/stale\n"}});
    CHECK(read(*second, "HEAD") == files["HEAD"]);
    CHECK(second->counts().not_modified == 0);
    CHECK(read(*second, "HEAD") == files["HEAD"]);
    CHECK(second->counts().not_modified == 1);
}

TEST_CASE_FIXTURE(small_origin, "http_store: a restored If-Modified-Since validator answers 304 too") {
    auto second = open();
    second->restore({{"fdl.json", "If-Modified-Since", http_date_of(tmp / "origin" / "fdl.json"), files["fdl.json"]}});
    CHECK(read(*second, "fdl.json") == files["fdl.json"]);
    INFO(nginx.access_log());
    CHECK(second->counts().not_modified == 1);
}

TEST_CASE_FIXTURE(small_origin, "http_store: data files and catalogs are read whole every time, never remembered nor restored") {
    std::string parquet = "PAR1 sixteen bytes PAR1";
    std::string record = "{\"id\": \"019a\"}\n";
    write_file(tmp / "origin" / "data" / "main" / "part-1.parquet", parquet);
    write_file(tmp / "origin" / "versions" / "019a" / "version.json", record);
    write_file(tmp / "origin" / "versions" / "019a" / "ducklake.duckdb", "a small catalog");
    auto first = warmed();
    for (int pass = 0; pass < 2; ++pass) {
        CHECK(read(*first, "data/main/part-1.parquet") == parquet);
        CHECK(read(*first, "versions/019a/ducklake.duckdb") == "a small catalog");
        CHECK(read(*first, "versions/019a/version.json") == record);
    }
    INFO(nginx.access_log());
    // Only the second read of version.json was conditional.
    CHECK(first->counts().not_modified == 1);
    std::set<std::string> keys;
    for (auto const& object : first->remembered_objects())
        keys.insert(object.key);
    CHECK(keys == std::set<std::string>{"HEAD", "fdl.json", "refs.json", "versions/019a/version.json"});

    // A state folder written by an older build may name data files: they are skipped.
    // The same ETags, as nginx makes them, restored for a record do answer 304.
    auto second = open();
    second->restore({{"data/main/part-1.parquet", "If-None-Match",
                      nginx_etag_of(tmp / "origin" / "data" / "main" / "part-1.parquet"), parquet},
                     {"versions/019a/version.json", "If-None-Match",
                      nginx_etag_of(tmp / "origin" / "versions" / "019a" / "version.json"), record}});
    REQUIRE(second->remembered_objects().size() == 1);
    CHECK(second->remembered_objects()[0].key == "versions/019a/version.json");
    CHECK(read(*second, "data/main/part-1.parquet") == parquet);
    CHECK(second->counts().not_modified == 0);
    CHECK(read(*second, "versions/019a/version.json") == record);
    CHECK(second->counts().not_modified == 1);
}
