// HTTP(S) origins: a real nginx for the protocol and TLS, the in-process fault server for
// the failures no real server makes on demand.

#include "core/store/http_store.hpp"

#include "core/http/client.hpp"
#include "core/io/blocking_pool.hpp"
#include "core/io/errors.hpp"
#include "core/store/open_store.hpp"
#include "core/sync/audit.hpp"
#include "core/sync/sync_pass.hpp"
#include "tests/component/helpers.hpp"
#include "tests/support/budget_watching_sink.hpp"
#include "tests/support/fault_http_server.hpp"
#include "tests/support/nginx.hpp"
#include "tests/support/run.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_ca.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <set>
#include <vector>

using namespace mirror;
using namespace mirror::test;
using io::store_errc;
namespace fs = std::filesystem;

namespace {

/// Files under versions/ and data/, with their bytes.
std::map<std::string, std::string> content_of(fs::path const& root) {
    std::map<std::string, std::string> out;
    for (auto const& top : {"versions", "data"})
        for (auto const& f : files_under(root / top))
            out[std::string(top) + "/" + f] = read_file(root / top / f);
    return out;
}

/// A sample repository served by nginx over HTTPS, with a CA the test trusts.
struct https_origin {
    temp_dir tmp;
    publisher origin{tmp / "origin"};
    sample_repo sample = publish_sample(origin);
    tls_files tls = make_test_ca(tmp / "tls");
    nginx_server nginx{nginx_options{tmp / "origin", tls.server_cert, tls.server_key,
                                     "location = /moved { return 301 http://127.0.0.1:1/fdl.json; }"}};
    event_loop run_on;

    std::unique_ptr<store::store> open(store::store_options options) {
        auto opened = store::open_store(nginx.url(), store::store_role::origin, nullptr, options);
        REQUIRE_MESSAGE(opened.has_value(), (opened ? "" : opened.error().message));
        return std::move(*opened);
    }
    store::store_options trusting() const { return {false, tls.ca_cert}; }
};

/// The fault server with a small repository-like set of objects and quick retries.
struct faulty_origin {
    fault_http_server server{{{"/fdl.json", "{\"fdl\": \"0.1\"}"}, {"/big.bin", std::string(200'000, 'x')}}};
    event_loop run_on;
    std::unique_ptr<store::http_store> store = open();

    std::unique_ptr<store::http_store> open() {
        store::http_store_settings settings;
        settings.allow_plain_http = true;
        settings.client.backoff_base = std::chrono::milliseconds(1);
        settings.client.header_timeout = std::chrono::milliseconds(300);
        settings.client.body_idle_timeout = std::chrono::milliseconds(300);
        auto opened = store::http_store::open(server.url(), settings);
        REQUIRE(opened.has_value());
        return std::move(*opened);
    }
    result<std::string> read(std::string key) { return run_on(store::read_all(*store, key, SIZE_MAX)); }
};

} // namespace

TEST_CASE_FIXTURE(https_origin, "an https origin served by nginx mirrors completely, and verify passes over https") {
    auto from = open(trusting());
    auto to = open_folder(tmp / "mirror", true);
    auto r = run_on(sync::run_sync(*from, *to, {}, nullptr));
    INFO(describe(r) << nginx.error_log());
    CHECK(r.exit_code() == 0);
    CHECK(r.published.size() == 4);
    CHECK(ref_of(tmp / "mirror", "refs/heads/main") == sample.main.back());
    CHECK(ref_of(tmp / "mirror", "refs/heads/dev") == sample.dev_tip);
    CHECK(ref_of(tmp / "mirror", "refs/tags/v1") == sample.main.front());
    CHECK(content_of(tmp / "mirror") == content_of(tmp / "origin"));
    CHECK(reader_visible_problems(tmp / "mirror").empty());

    auto audit = run_on(sync::run_audit(*from, nullptr));
    CHECK(audit.exit_code() == 0);
    CHECK(audit.versions.size() == 4);
    CHECK(!audit.fatal);
}

namespace {

/// Reads `key` through a store opened on `budget`, for the sink's notes.
result<void> read_within(https_origin& fixture, io::memory_budget& budget, std::string const& key,
                         budget_watching_sink& sink) {
    auto options = fixture.trusting();
    options.memory = &budget;
    auto from = fixture.open(options);
    return fixture.run_on([&]() -> awaitable<result<void>> { co_return co_await from->read(key, sink); }());
}

} // namespace

TEST_CASE_FIXTURE(https_origin, "a body's read buffers are granted from the memory budget, and a spent budget reads in small chunks") {
    std::string big(3 * 1024 * 1024 + 17, '\0');
    for (std::size_t i = 0; i < big.size(); ++i)
        big[i] = static_cast<char>(i * 7 + i / 4096);
    write_file(tmp / "origin" / "big.bin", big);

    SUBCASE("room in the budget: full chunks, their buffers granted while the body streams") {
        io::memory_budget budget(64 * 1024 * 1024);
        budget_watching_sink sink(budget);
        auto done = read_within(*this, budget, "big.bin", sink);
        REQUIRE_MESSAGE(done.has_value(), (done ? "" : done.error().message));
        CHECK(sink.text == big);
        CHECK(sink.largest_chunk == 256 * 1024);
        CHECK(sink.most_granted == 2 * 256 * 1024); // the chunk and the connection's buffer
        CHECK(budget.in_use() == 0);               // given back with the answer
    }
    SUBCASE("a budget without room: the body still arrives whole, in small chunks, nothing granted") {
        io::memory_budget budget(512 * 1024); // half of it is less than the two buffers
        budget_watching_sink sink(budget);
        auto done = read_within(*this, budget, "big.bin", sink);
        REQUIRE_MESSAGE(done.has_value(), (done ? "" : done.error().message));
        CHECK(sink.text == big);
        CHECK(sink.largest_chunk <= http::small_read_chunk);
        CHECK(budget.peak() == 0);
    }
    SUBCASE("a small body never asks the budget") {
        write_file(tmp / "origin" / "small.bin", big.substr(0, 9000));
        io::memory_budget budget(64 * 1024 * 1024);
        budget_watching_sink sink(budget);
        auto done = read_within(*this, budget, "small.bin", sink);
        REQUIRE(done.has_value());
        CHECK(sink.text == big.substr(0, 9000));
        CHECK(budget.peak() == 0);
    }
}

TEST_CASE_FIXTURE(https_origin, "over https, a large body is received on the pool threads, whole, its chunk alone granted") {
    std::string big(3 * 1024 * 1024 + 17, '\0');
    for (std::size_t i = 0; i < big.size(); ++i)
        big[i] = static_cast<char>(i * 13 + i / 1000);
    write_file(tmp / "origin" / "big.bin", big);
    io::blocking_pool pool(2); // before the store, which receives on it
    io::memory_budget budget(64 * 1024 * 1024);
    auto options = trusting();
    options.memory = &budget;
    auto opened = store::open_store(nginx.url(), store::store_role::origin, &pool, options);
    REQUIRE(opened.has_value());
    for (int round = 0; round < 2; ++round) { // the second on the connection the first kept
        CAPTURE(round);
        budget_watching_sink sink(budget);
        auto before = pool.runs();
        auto done = run_on([&]() -> awaitable<result<void>> { co_return co_await (*opened)->read("big.bin", sink); }());
        REQUIRE_MESSAGE(done.has_value(), (done ? "" : done.error().message));
        CHECK(sink.text == big);
        CHECK(pool.runs() > before);
        CHECK(sink.most_granted == 256 * 1024); // the chunk: no connection buffer on this path
        CHECK(budget.in_use() == 0);
    }
}

TEST_CASE_FIXTURE(https_origin, "an unchanged origin costs 3 conditional requests a quick pass, and one per file a recheck") {
    auto opened = store::http_store::open(nginx.url(), {.client = {.ca_bundle = tls.ca_cert}});
    REQUIRE(opened.has_value());
    auto& from = **opened;
    auto to = open_folder(tmp / "mirror", true);
    REQUIRE(run_on(sync::run_sync(from, *to, {}, nullptr)).exit_code() == 0);

    sync::sync_options quick;
    quick.recheck_published = false;
    auto before = from.counts();
    auto again = run_on(sync::run_sync(from, *to, quick, nullptr));
    CHECK(again.exit_code() == 0);
    CHECK(again.files_copied == 0);
    INFO(nginx.access_log());
    // fdl.json, HEAD and refs.json (the list of refs where the origin cannot list), each
    // answered 304: docs/cli.md, "What a rerun reads".
    CHECK(from.counts().requests - before.requests == 3);
    CHECK(from.counts().not_modified - before.not_modified == 3);

    // A recheck also asks, for each published version, after each file the mirror holds
    // of it and after expired.json and version.json.sig, and reads each ref tip's
    // version.json again (3 tips: main, dev, v1).
    std::uint64_t probes = 0;
    auto published = sample.main;
    published.push_back(sample.dev_tip);
    for (auto const& id : published) {
        std::set<std::string> asked{"expired.json", "version.json.sig"};
        for (auto const& f : files_under(tmp / "mirror" / "versions" / id))
            asked.insert(f);
        probes += asked.size();
    }
    before = from.counts();
    auto full = run_on(sync::run_sync(from, *to, {}, nullptr));
    CHECK(full.exit_code() == 0);
    CHECK(full.files_copied == 0);
    CHECK(full.violations.empty());
    CHECK(from.counts().requests - before.requests == 3 + probes + 3);
}

TEST_CASE_FIXTURE(https_origin, "over HTTP, a recheck follows expiry, late signatures and late catalogs, a quick pass does not") {
    // The sample's fdl.json declares no formats; declare 1.1 so the probe asks for it.
    auto settings = read_file(tmp / "origin" / "fdl.json");
    auto brace = settings.rfind('}');
    settings.insert(brace, ",\"catalog_formats\":[{\"ducklake\":\"1.0\"},{\"ducklake\":\"1.1\"}]");
    write_file(tmp / "origin" / "fdl.json", settings);
    auto from = open(trusting());
    auto to = open_folder(tmp / "mirror", true);
    auto first = run_on(sync::run_sync(*from, *to, {}, nullptr));
    INFO(describe(first));
    REQUIRE(first.exit_code() == 0);

    auto expired = sample.main.front();
    auto tip = sample.main.back();
    origin.expire(expired, false);
    origin.add_signature_placeholder(tip);
    origin.add_late_catalog(tip, "1.1");
    sync::sync_options quick;
    quick.recheck_published = false;
    auto skipped = run_on(sync::run_sync(*from, *to, quick, nullptr));
    CHECK(skipped.exit_code() == 0);
    CHECK(skipped.followed.empty());
    CHECK(!fs::exists(tmp / "mirror" / "versions" / expired / "expired.json"));

    auto followed = run_on(sync::run_sync(*from, *to, {}, nullptr));
    INFO(describe(followed));
    CHECK(followed.exit_code() == 0);
    CHECK(followed.followed.size() == 3);
    auto mirror_dir = [&](std::string const& id) { return tmp / "mirror" / "versions" / id; };
    CHECK(read_file(mirror_dir(expired) / "expired.json") == read_file(origin.version_dir(expired) / "expired.json"));
    CHECK(!fs::exists(mirror_dir(expired) / "ducklake.duckdb"));
    CHECK(read_file(mirror_dir(tip) / "version.json.sig") == read_file(origin.version_dir(tip) / "version.json.sig"));
    CHECK(read_file(mirror_dir(tip) / "catalogs" / "1.1.duckdb") ==
          read_file(origin.version_dir(tip) / "catalogs" / "1.1.duckdb"));
    CHECK(reader_visible_problems(tmp / "mirror").empty());

    auto settled = run_on(sync::run_sync(*from, *to, {}, nullptr));
    CHECK(settled.exit_code() == 0);
    CHECK(settled.files_copied == 0);
    CHECK(settled.followed.empty());
    CHECK(settled.violations.empty());
}

TEST_CASE_FIXTURE(https_origin, "over HTTP, a recheck reports files deleted or rewritten in published versions") {
    auto from = open(trusting());
    auto to = open_folder(tmp / "mirror", true);
    REQUIRE(run_on(sync::run_sync(*from, *to, {}, nullptr)).exit_code() == 0);
    auto id = sample.main[1];
    auto old = sample.main.front();
    fs::remove(origin.version_dir(id) / "dataset.json");
    write_file(origin.version_dir(old) / "ducklake.duckdb", "a different catalog");
    auto r = run_on(sync::run_sync(*from, *to, {}, nullptr));
    INFO(describe(r));
    CHECK(r.exit_code() == 1);
    CHECK(violated(r, sync::sync_errc::file_deleted_at_origin, "versions/" + id + "/dataset.json"));
    CHECK(violated(r, sync::sync_errc::version_rewritten, "versions/" + old + "/ducklake.duckdb"));
    CHECK(fs::exists(tmp / "mirror" / "versions" / id / "dataset.json"));
}

TEST_CASE_FIXTURE(https_origin, "TLS is verified: an unknown CA is refused, and so is http:// unless allowed") {
    auto stranger = make_test_ca(tmp / "other", "stranger");
    auto from = open({false, stranger.ca_cert});
    auto to = open_folder(tmp / "mirror", true);
    auto r = run_on(sync::run_sync(*from, *to, {}, nullptr));
    REQUIRE(r.fatal.has_value());
    CHECK(r.fatal->message.find("the TLS certificate does not verify") != std::string::npos);
    CHECK(!fs::exists(tmp / "mirror" / "fdl.json"));

    auto plain = store::open_store("http://127.0.0.1:1/repo/", store::store_role::origin, nullptr, {});
    REQUIRE(!plain);
    CHECK(plain.error().code == store_errc::rejected);
    CHECK(plain.error().message.find("plain http:// is refused unless allowed") != std::string::npos);
    CHECK(store::open_store("http://127.0.0.1:1/repo/", store::store_role::origin, nullptr, {true, {}}).has_value());
    auto as_mirror = store::open_store(nginx.url(), store::store_role::mirror, nullptr, trusting());
    REQUIRE(!as_mirror);
    CHECK(as_mirror.error().code == store_errc::unsupported);
}

TEST_CASE_FIXTURE(https_origin, "a redirect from https to http is refused") {
    auto from = open(trusting());
    auto r = run_on(store::read_all(*from, "moved", SIZE_MAX));
    REQUIRE(!r);
    CHECK(r.error().code == store_errc::rejected);
    CHECK(r.error().message.find("a redirect from https to http") != std::string::npos);
}

TEST_CASE_FIXTURE(faulty_origin, "transient failures are retried, others are not") {
    SUBCASE("503 twice, then the object") {
        server.fail_path("/fdl.json", respond_with(503), 2);
        CHECK(read("fdl.json").value() == "{\"fdl\": \"0.1\"}");
        CHECK(server.requests().size() == 3);
    }
    SUBCASE("429 with Retry-After is waited out") {
        server.fail_path("/fdl.json", respond_with(429, {{"Retry-After", "1"}}), 1);
        auto started = std::chrono::steady_clock::now();
        CHECK(read("fdl.json").has_value());
        CHECK(std::chrono::steady_clock::now() - started >= std::chrono::milliseconds(900));
    }
    SUBCASE("a connection closed before the answer") {
        server.fail_path("/fdl.json", close_before_headers(), 1);
        CHECK(read("fdl.json").has_value());
    }
    SUBCASE("an answer that stalls past the deadline") {
        server.fail_path("/fdl.json", stall_before_headers(std::chrono::milliseconds(1500)), 1);
        CHECK(read("fdl.json").has_value());
        CHECK(server.requests().size() == 2);
    }
    SUBCASE("404 and 403 are final at once") {
        auto missing = read("absent.json");
        REQUIRE(!missing);
        CHECK(missing.error().code == store_errc::not_found);
        server.fail_path("/fdl.json", respond_with(403));
        auto denied = read("fdl.json");
        REQUIRE(!denied);
        CHECK(denied.error().code == store_errc::access_denied);
        CHECK(server.requests().size() == 2);
    }
    SUBCASE("retries run out") {
        server.fail_path("/fdl.json", respond_with(500));
        auto r = read("fdl.json");
        REQUIRE(!r);
        CHECK(r.error().code == store_errc::transient);
        CHECK(r.error().message.find("HTTP 500") != std::string::npos);
        CHECK(r.error().message.find("after 5 attempts") != std::string::npos);
        CHECK(server.requests().size() == 5);
    }
}

TEST_CASE_FIXTURE(faulty_origin, "a body cut short is resumed from where it stopped, pinned to its ETag") {
    server.fail_path("/big.bin", short_body(), 1);
    auto r = read("big.bin");
    REQUIRE(r.has_value());
    CHECK(*r == std::string(200'000, 'x'));
    auto requests = server.requests();
    REQUIRE(requests.size() == 2);
    CHECK(requests[1].header("Range").starts_with("bytes="));
    CHECK(requests[1].header("Range") != "bytes=0-");
    CHECK(requests[1].header("If-Range") == fault_http_server::etag_of(std::string(200'000, 'x')));
}

TEST_CASE_FIXTURE(faulty_origin, "a resumed read whose rest comes with another ETag is refused, never spliced") {
    // A server that ignores If-Range, and changed the object in between: its 206 carries
    // the rest of other bytes.
    server.put_generated("/big.bin", [](std::size_t n) { return std::string(200'000, n == 1 ? 'x' : 'y'); });
    server.fail_path("/big.bin", short_body(), 1);
    auto r = read("big.bin");
    REQUIRE(!r.has_value());
    CHECK(r.error().code == store_errc::transient);
    CHECK(r.error().message.find("changed while it was read (the rest came with ETag " +
                                 fault_http_server::etag_of(std::string(200'000, 'y'))) != std::string::npos);
    CHECK(server.requests().size() == 2); // not asked again for the rest of other bytes
}

TEST_CASE_FIXTURE(faulty_origin, "a body longer than its Content-Length is an error, never a truncated file") {
    server.fail_path("/fdl.json", long_body());
    auto r = read("fdl.json");
    REQUIRE(!r);
    CHECK(r.error().message.find("more bytes than its Content-Length") != std::string::npos);
}

TEST_CASE_FIXTURE(faulty_origin, "a body that drips in slower than the minimum rate is cut, attempt after attempt") {
    store::http_store_settings settings;
    settings.allow_plain_http = true;
    settings.client.backoff_base = std::chrono::milliseconds(1);
    settings.client.min_body_rate = 1'000'000; // 200 KB: 0.2 s each attempt, after the grace
    settings.client.body_grace = std::chrono::milliseconds(200);
    auto opened = store::http_store::open(server.url(), settings);
    REQUIRE(opened.has_value());
    // At full speed the same body arrives well within its time.
    CHECK(run_on(store::read_all(**opened, "big.bin", SIZE_MAX)).value().size() == 200'000);

    server.fail_path("/big.bin", drip_body(std::chrono::milliseconds(10)));
    auto started = std::chrono::steady_clock::now();
    auto r = run_on(store::read_all(**opened, "big.bin", SIZE_MAX));
    auto took = std::chrono::steady_clock::now() - started;
    REQUIRE(!r);
    CHECK(r.error().code == store_errc::transient);
    CHECK(r.error().message.find("the body came slower than 1000000 bytes a second") != std::string::npos);
    CHECK(took < std::chrono::seconds(10)); // 5 attempts of about 0.4 s, not 2,000 s of drip
}

TEST_CASE_FIXTURE(faulty_origin, "a chunked body that drips in slower than the minimum rate is cut, attempt after attempt") {
    // Without a Content-Length the deadline grows with the bytes received: body_grace +
    // received / min_body_rate. A drip of 200 bytes a second against 1,000,000 stays within
    // a few milliseconds past the grace.
    server.put("/chunked.bin", std::string(2'000, 'c'));
    store::http_store_settings settings;
    settings.allow_plain_http = true;
    settings.client.backoff_base = std::chrono::milliseconds(1);
    settings.client.min_body_rate = 1'000'000;
    settings.client.body_grace = std::chrono::milliseconds(200);
    auto opened = store::http_store::open(server.url(), settings);
    REQUIRE(opened.has_value());
    // Chunked at full speed, the same body arrives whole, in one request. (With a grace of
    // its own: 2,000 chunks can take longer than 200 ms on a loaded machine or under the
    // sanitizers.)
    auto patient = settings;
    patient.client.body_grace = std::chrono::seconds(30);
    auto control = store::http_store::open(server.url(), patient);
    REQUIRE(control.has_value());
    server.fail_path("/chunked.bin", chunked_drip_body(std::chrono::milliseconds(0)), 1);
    CHECK(run_on(store::read_all(**control, "chunked.bin", SIZE_MAX)).value() == std::string(2'000, 'c'));
    REQUIRE(server.requests().size() == 1);

    // Each byte a chunk, 5 ms apart: 10 s for the whole body if nothing cut it.
    server.fail_path("/chunked.bin", chunked_drip_body(std::chrono::milliseconds(5)));
    auto started = std::chrono::steady_clock::now();
    auto r = run_on(store::read_all(**opened, "chunked.bin", SIZE_MAX));
    auto took = std::chrono::steady_clock::now() - started;
    REQUIRE_MESSAGE(!r, "the drip was read to its end in "
                            << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms");
    CHECK(r.error().code == store_errc::transient);
    CHECK(r.error().message.find("the body came slower than 1000000 bytes a second") != std::string::npos);
    CHECK(took < std::chrono::seconds(5)); // 5 attempts of about 0.2 s, not 10 s of drip
    CHECK(server.requests().size() == 1 + 5); // each attempt cut, then given up
}

TEST_CASE_FIXTURE(faulty_origin, "redirects are followed up to a limit") {
    server.fail_path("/old.json", redirect_to(302, "/fdl.json"));
    CHECK(read("old.json").value() == "{\"fdl\": \"0.1\"}");
    server.fail_path("/loop.json", redirect_to(307, "/loop.json"));
    auto r = read("loop.json");
    REQUIRE(!r);
    CHECK(r.error().message.find("more than 5 redirects") != std::string::npos);
}

TEST_CASE_FIXTURE(faulty_origin, "a redirect to another host is refused unless that host is allowed") {
    // localhost is this same server under another name: to the client, another host.
    std::string elsewhere = "http://localhost:" + std::to_string(server.port()) + "/fdl.json";
    server.fail_path("/moved.json", redirect_to(302, elsewhere));
    auto refused = read("moved.json");
    REQUIRE(!refused);
    CHECK(refused.error().code == store_errc::rejected);
    CHECK(refused.error().message.find("a redirect to another host or port (" + elsewhere + ") is refused") !=
          std::string::npos);
    CHECK(server.requests().size() == 1); // the other host was never asked

    // Another port of the same host is another origin too.
    server.fail_path("/port.json", redirect_to(302, "http://127.0.0.1:1/fdl.json"));
    CHECK(read("port.json").error().message.find("another host or port") != std::string::npos);

    // Allowed for this origin: followed. The origin answers from loopback, an internal
    // address, so the allowed host may be internal too.
    store::http_store_settings settings;
    settings.allow_plain_http = true;
    settings.client.redirect_hosts = {"localhost"};
    auto allowing = store::http_store::open(server.url(), settings);
    REQUIRE(allowing.has_value());
    CHECK(run_on(store::read_all(**allowing, "moved.json", SIZE_MAX)).value() == "{\"fdl\": \"0.1\"}");
}

TEST_CASE_FIXTURE(faulty_origin, "a request held to public addresses never connects to an internal one") {
    // What a redirect from a public origin to an allowed host is held to: loopback refused.
    http::client client({});
    auto where = http::parse_location(server.url() + "fdl.json");
    REQUIRE(where.has_value());
    http::request req;
    req.where = *where;
    req.public_addresses_only = true;
    auto answer = run_on(client.exchange(req, nullptr));
    REQUIRE(!answer);
    CHECK(answer.error().code == store_errc::rejected);
    CHECK(answer.error().message.find("127.0.0.1 resolves only to internal addresses (127.0.0.1") !=
          std::string::npos);
    CHECK(server.requests().empty());
    req.public_addresses_only = false;
    CHECK(run_on(client.exchange(req, nullptr)).has_value());
}

TEST_CASE_FIXTURE(faulty_origin, "connections are kept alive and requests name fdl-mirror") {
    for (int i = 0; i < 5; ++i)
        REQUIRE(read("fdl.json").has_value());
    CHECK(server.connections() == 1);
    CHECK(server.requests().front().header("User-Agent").starts_with("fdl-mirror"));
    // The second read of a remembered object is conditional, and answered 304.
    CHECK(server.requests()[1].header("If-None-Match") == fault_http_server::etag_of("{\"fdl\": \"0.1\"}"));
    CHECK(store->counts().not_modified == 4);
}

TEST_CASE_FIXTURE(faulty_origin, "an answer written as its head, then its body, is not held for the client's delayed ACK") {
    // Ceph RGW writes a GET's head and body apart with Nagle's algorithm on, as the fault
    // server does here: the body waits until the head is acknowledged. Without TCP_QUICKACK
    // the client acknowledged it only when its 40 ms delayed-ACK timer fired, on every
    // answer of a reused connection after the first few.
    server.fail_path("/fdl.json", head_then_body());
    http::client client({});
    auto where = http::parse_location(server.url() + "fdl.json");
    REQUIRE(where.has_value());
    http::request req;
    req.where = *where;
    std::vector<double> milliseconds;
    for (int i = 0; i < 15; ++i) {
        auto started = std::chrono::steady_clock::now();
        auto answer = run_on(client.exchange(req, nullptr));
        REQUIRE(answer.has_value());
        CHECK(answer->status == 200);
        milliseconds.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
    }
    CHECK(server.connections() == 1);
    // The median, so that one slow moment of a busy machine does not decide: 40 ms or more
    // an answer when the body waits for the delayed ACK, about a millisecond otherwise.
    std::sort(milliseconds.begin(), milliseconds.end());
    CHECK(milliseconds[milliseconds.size() / 2] < 20.0);
}

TEST_CASE_FIXTURE(faulty_origin, "interim answers (100 Continue, 103 Early Hints) are skipped for the final one") {
    server.fail_path("/fdl.json", interim_first());
    for (int i = 0; i < 3; ++i) { // on one kept connection: nothing of the interim answers is left over
        auto got = read("fdl.json");
        REQUIRE_MESSAGE(got.has_value(), (got ? "" : got.error().message));
        CHECK(*got == "{\"fdl\": \"0.1\"}");
    }
    CHECK(server.connections() == 1);
}

TEST_CASE("a CA bundle that cannot be loaded is refused when the store opens, naming the file") {
    temp_dir tmp;
    write_file(tmp / "not-a-bundle.pem", "not PEM at all\n");
    write_file(tmp / "s3-credentials", "access_key_id = AKIDEXAMPLE\nsecret_access_key = not-a-secret\n");
    for (auto const& bundle : {tmp / "absent.pem", tmp / "not-a-bundle.pem"}) {
        CAPTURE(bundle);
        store::store_options options;
        options.ca_bundle = bundle;
        options.s3.credentials_file = tmp / "s3-credentials";
        auto https = store::open_store("https://data.example.org/lake/", store::store_role::origin, nullptr, options);
        REQUIRE(!https);
        CHECK(https.error().message.find(bundle.string()) != std::string::npos);
        auto s3 = store::open_store("s3://bucket/lake/", store::store_role::origin, nullptr, options);
        REQUIRE(!s3);
        CHECK(s3.error().message.find(bundle.string()) != std::string::npos);
    }
    // Over plain http (allowed explicitly) the bundle plays no part.
    store::store_options plain;
    plain.allow_plain_http = true;
    plain.ca_bundle = tmp / "absent.pem";
    CHECK(store::open_store("http://127.0.0.1:1/lake/", store::store_role::origin, nullptr, plain).has_value());
}
