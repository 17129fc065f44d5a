// Bodies received on the pool threads (core/http/pool_receive.hpp): every failure the I/O
// thread's reading meets is met the same way, with the in-process fault server making them.
#include "core/http/client.hpp"
#include "core/io/blocking_pool.hpp"
#include "core/io/errors.hpp"
#include "core/store/http_store.hpp"
#include "core/store/open_store.hpp"
#include "tests/support/fault_http_server.hpp"
#include "tests/support/fault_proxy.hpp"
#include "tests/support/run.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_ca.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <string>

using namespace mirror;
using namespace mirror::test;

namespace {

std::string const small_object = "{\"fdl\": \"0.1\"}";
/// Past a pool trip's 256 KiB chunk, so that a body takes several.
std::string const large_object = [] {
    std::string out;
    for (int i = 0; out.size() < 700'000; ++i)
        out += "line " + std::to_string(i) + "\n";
    return out;
}();

/// The fault server, and a store on it whose every body is received on a pool of its own.
struct pooled_origin {
    fault_http_server server{{{"/fdl.json", small_object}, {"/big.bin", large_object}}};
    io::blocking_pool pool{2}; // before the store, which uses it
    event_loop run_on;

    std::unique_ptr<store::http_store> open(std::uint64_t min_body_rate = 16 * 1024,
                                            std::chrono::milliseconds grace = std::chrono::seconds(30)) {
        store::http_store_settings settings;
        settings.allow_plain_http = true;
        settings.client.backoff_base = std::chrono::milliseconds(1);
        settings.client.header_timeout = std::chrono::milliseconds(300);
        settings.client.body_idle_timeout = std::chrono::milliseconds(300);
        settings.client.min_body_rate = min_body_rate;
        settings.client.body_grace = grace;
        settings.client.receive_pool = &pool;
        settings.client.receive_on_pool_from = 0;
        auto opened = store::http_store::open(server.url(), settings);
        REQUIRE(opened.has_value());
        return std::move(*opened);
    }
    std::unique_ptr<store::http_store> store = open();

    result<std::string> read(std::string key) { return run_on(store::read_all(*store, key, SIZE_MAX)); }
};

} // namespace

TEST_CASE_FIXTURE(pooled_origin, "bodies received on the pool arrive whole, and the pool did the receiving") {
    auto before = pool.runs();
    CHECK(read("fdl.json").value() == small_object);
    CHECK(read("big.bin").value() == large_object);
    CHECK(pool.runs() > before);
    CHECK(server.connections() == 1); // and the connection was kept alive between them
}

TEST_CASE_FIXTURE(pooled_origin, "below the threshold, bodies are read on the I/O thread, not the pool") {
    store::http_store_settings settings;
    settings.allow_plain_http = true;
    settings.client.receive_pool = &pool;
    settings.client.receive_on_pool_from = large_object.size() + 1;
    auto opened = store::http_store::open(server.url(), settings);
    REQUIRE(opened.has_value());
    auto before = pool.runs();
    CHECK(run_on(store::read_all(**opened, "big.bin", SIZE_MAX)).value() == large_object);
    CHECK(pool.runs() == before);
}

TEST_CASE_FIXTURE(pooled_origin, "open_store gives an HTTP origin the pool to receive large bodies on") {
    std::string const two_mebibytes(2 * 1024 * 1024, 'b');
    server.put("/two.bin", two_mebibytes);
    store::store_options options;
    options.allow_plain_http = true;
    auto opened = store::open_store(server.url(), store::store_role::origin, &pool, options);
    REQUIRE(opened.has_value());
    auto before = pool.runs();
    CHECK(run_on(store::read_all(**opened, "fdl.json", SIZE_MAX)).value() == small_object); // below 1 MiB: no trip
    CHECK(pool.runs() == before);
    CHECK(run_on(store::read_all(**opened, "two.bin", SIZE_MAX)).value() == two_mebibytes);
    CHECK(pool.runs() > before);
}

TEST_CASE_FIXTURE(pooled_origin, "on the pool, a body cut short or reset is resumed from where it stopped") {
    SUBCASE("closed half way") { server.fail_path("/big.bin", short_body(), 1); }
    SUBCASE("reset half way") { server.fail_path("/big.bin", reset_mid_body(), 1); }
    CHECK(read("big.bin").value() == large_object);
    auto requests = server.requests();
    REQUIRE(requests.size() == 2);
    CHECK(requests[1].header("Range").starts_with("bytes="));
    CHECK(requests[1].header("Range") != "bytes=0-");
}

TEST_CASE_FIXTURE(pooled_origin, "on the pool, a body that stalls past the idle deadline is cut and fetched again") {
    server.fail_path("/big.bin", stall_mid_body(std::chrono::milliseconds(3000)), 1);
    auto started = std::chrono::steady_clock::now();
    CHECK(read("big.bin").value() == large_object);
    // Cut after the 300 ms idle deadline, not after the server's 3 s stall.
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::milliseconds(2500));
    CHECK(server.requests().size() == 2);
}

TEST_CASE_FIXTURE(pooled_origin, "on the pool, more bytes than the Content-Length is an error") {
    std::string key;
    SUBCASE("a small body: the excess came with the head") { key = "fdl.json"; }
    SUBCASE("a large body: the excess follows it") { key = "big.bin"; }
    server.fail_path("/" + key, long_body());
    auto r = read(key);
    REQUIRE(!r);
    CHECK(r.error().code == io::store_errc::rejected);
    CHECK(r.error().message.find("more bytes than its Content-Length") != std::string::npos);
}

TEST_CASE_FIXTURE(pooled_origin, "on the pool, a body that drips in slower than the minimum rate is cut") {
    auto slow = open(1'000'000, std::chrono::milliseconds(200));
    server.fail_path("/big.bin", drip_body(std::chrono::milliseconds(10)));
    auto started = std::chrono::steady_clock::now();
    auto r = run_on(store::read_all(*slow, "big.bin", SIZE_MAX));
    REQUIRE(!r);
    CHECK(r.error().code == io::store_errc::transient);
    CHECK(r.error().message.find("the body came slower than 1000000 bytes a second") != std::string::npos);
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
}

namespace {

/// The same objects over HTTPS: the fault proxy, with TLS in front of the fault server,
/// makes the failures, and a store on it receives every body on a pool of its own.
struct pooled_tls_origin {
    temp_dir tmp;
    tls_files tls = make_test_ca(tmp / "tls");
    fault_http_server server{{{"/fdl.json", small_object}, {"/big.bin", large_object}}};
    fault_proxy front{{.upstream_port = server.port(), .tls_cert = tls.server_cert, .tls_key = tls.server_key}};
    io::blocking_pool pool{2};
    event_loop run_on;
    std::unique_ptr<store::http_store> store = [this] {
        store::http_store_settings settings;
        settings.client.ca_bundle = tls.ca_cert;
        settings.client.backoff_base = std::chrono::milliseconds(1);
        settings.client.header_timeout = std::chrono::milliseconds(300);
        settings.client.body_idle_timeout = std::chrono::milliseconds(300);
        settings.client.receive_pool = &pool;
        settings.client.receive_on_pool_from = 0;
        auto opened = store::http_store::open(front.url(), settings);
        REQUIRE(opened.has_value());
        return std::move(*opened);
    }();

    result<std::string> read(std::string key) { return run_on(store::read_all(*store, key, SIZE_MAX)); }
};

} // namespace

TEST_CASE_FIXTURE(pooled_tls_origin, "over TLS, bodies received on the pool arrive whole on a kept connection") {
    auto before = pool.runs();
    for (int round = 0; round < 2; ++round) {
        CHECK(read("fdl.json").value() == small_object);
        CHECK(read("big.bin").value() == large_object);
    }
    CHECK(pool.runs() > before);
    CHECK(front.connections() == 1);
}

TEST_CASE_FIXTURE(pooled_tls_origin, "over TLS on the pool, a body cut short, reset or stalled is fetched again, whole") {
    SUBCASE("closed half way") { front.fail_matching("GET", "/big.bin", short_body()); }
    SUBCASE("reset half way") { front.fail_matching("GET", "/big.bin", reset_mid_body()); }
    SUBCASE("stalled past the idle deadline") {
        front.fail_matching("GET", "/big.bin", stall_mid_body(std::chrono::milliseconds(3000)));
    }
    auto started = std::chrono::steady_clock::now();
    CHECK(read("big.bin").value() == large_object);
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::milliseconds(2500));
    CHECK(front.count("GET", "/big.bin") == 2);
}

TEST_CASE_FIXTURE(pooled_tls_origin, "over TLS on the pool, more bytes than the Content-Length is an error") {
    std::string key;
    SUBCASE("a small body") { key = "fdl.json"; }
    SUBCASE("a large body") { key = "big.bin"; }
    front.fail_matching("GET", "/" + key, long_body());
    auto r = read(key);
    REQUIRE(!r);
    CHECK(r.error().code == io::store_errc::rejected);
    CHECK(r.error().message.find("more bytes than its Content-Length") != std::string::npos);
}
