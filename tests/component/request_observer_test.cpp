// What the HTTP and S3 stores tell their request observer: the methods and codes of real
// exchanges with nginx and s3rver (stores opened as the daemon opens them, through
// open_store), and the kinds of failure the fault proxy makes.

#include "core/io/request_observer.hpp"

#include "core/store/open_store.hpp"
#include "tests/component/fault_proxy_helpers.hpp"

#include <algorithm>
#include <utility>

using namespace mirror;
using namespace mirror::test;
using namespace std::chrono_literals;
using io::store_errc;
using lines_seen = std::vector<std::string>;

namespace {

/// Keeps each event as "METHOD STATUS[ KIND]": "GET 304", "GET 0 connect".
class recording_observer final : public io::request_observer {
public:
    void observe(io::request_event const& event) override {
        std::string line = std::string(event.method) + " " + std::to_string(event.status);
        if (event.failure != io::request_failure::none)
            line += std::string(" ") + io::to_string(event.failure);
        seen_.push_back(std::move(line));
    }
    /// The events since the last call.
    lines_seen take() { return std::exchange(seen_, {}); }

private:
    lines_seen seen_;
};

/// An HTTP store of `url` with quick retries and deadlines, reporting to `seen`.
std::unique_ptr<store::http_store> open_http(std::string const& url, std::shared_ptr<recording_observer> seen,
                                             unsigned attempts = 5) {
    store::http_store_settings settings;
    settings.allow_plain_http = true;
    settings.client = quick_client();
    settings.client.max_attempts = attempts;
    settings.client.observer = std::move(seen);
    auto opened = store::http_store::open(url, settings);
    REQUIRE_MESSAGE(opened.has_value(), (opened ? "" : opened.error().message));
    return std::move(*opened);
}

} // namespace

TEST_CASE("an HTTP store opened by open_store reports each request: 200, 304 and 404 from nginx") {
    temp_dir tmp;
    write_file(tmp / "www" / "fdl.json", "{\"fdl\": \"0.1\"}\n");
    nginx_server nginx({tmp / "www"});
    event_loop run_on;
    auto seen = std::make_shared<recording_observer>();
    store::store_options options;
    options.allow_plain_http = true;
    options.observer = seen;
    auto opened = store::open_store(nginx.url(), store::store_role::origin, nullptr, options);
    REQUIRE_MESSAGE(opened.has_value(), (opened ? "" : opened.error().message));
    auto& origin = **opened;

    REQUIRE(run_on(origin.stat("fdl.json")).has_value());
    REQUIRE(run_on(store::read_all(origin, "fdl.json", 100)));
    REQUIRE(run_on(store::read_all(origin, "fdl.json", 100))); // remembered: asked again conditionally
    CHECK(run_on(origin.stat("absent.json")).error().code == store_errc::not_found);
    CHECK(run_on(store::read_all(origin, "absent.json", 100)).error().code == store_errc::not_found);
    INFO(nginx.access_log());
    CHECK(seen->take() == lines_seen{"HEAD 200", "GET 200", "GET 304", "HEAD 404", "GET 404"});
}

TEST_CASE("an S3 store reports every request: writes, multipart parts, a listing page, reads, 404s, deletes") {
    temp_dir tmp;
    s3rver_server server{{.buckets = {"mirror"}}};
    event_loop run_on;
    auto seen = std::make_shared<recording_observer>();
    write_file(tmp / "credentials", "access_key_id = S3RVER\nsecret_access_key = S3RVER\n");
    store::store_options options;
    options.allow_plain_http = true;
    options.s3.endpoint = server.endpoint();
    options.s3.region = "us-east-1";
    options.s3.addressing = "path";
    options.s3.credentials_file = tmp / "credentials";
    options.observer = seen;
    auto opened = store::open_store("s3://mirror/p/", store::store_role::mirror, nullptr, options);
    REQUIRE_MESSAGE(opened.has_value(), (opened ? "" : opened.error().message));
    auto& s3 = **opened;

    REQUIRE(run_on(store::write_all(s3, "a.txt", "alpha", store::write_mode::create_only)));
    REQUIRE(run_on(s3.stat("a.txt")).has_value());
    REQUIRE(run_on(store::read_all(s3, "a.txt", 100)));
    std::size_t listed = 0;
    REQUIRE(run_on(s3.list("", [&](store::list_entry) -> result<void> {
        ++listed;
        return {};
    })));
    CHECK(listed == 1);
    CHECK(run_on(s3.stat("absent")).error().code == store_errc::not_found);
    CHECK(run_on(store::read_all(s3, "absent", 100)).error().code == store_errc::not_found);
    REQUIRE(run_on(s3.remove("a.txt")));
    INFO(server.log());
    CHECK(seen->take() == lines_seen{"PUT 200", "HEAD 200", "GET 200", "GET 200", "HEAD 404", "GET 404", "DELETE 204"});

    // A multipart upload: its start, each part and its completion are requests of their own.
    store::s3_store_settings settings;
    settings.access.creds = {std::string(s3rver_server::access_key_id), std::string(s3rver_server::secret_access_key),
                             std::nullopt};
    settings.access.endpoint = server.endpoint();
    settings.access.path_style = true;
    settings.allow_plain_http = true;
    settings.part_bytes = settings.multipart_threshold = 5 * 1024 * 1024;
    settings.parallel_parts = 0; // one part after the other: the events come in order
    settings.client.observer = seen;
    auto parts = store::s3_store::open("s3://mirror/parts/", settings);
    REQUIRE(parts.has_value());
    std::string big(11 * 1024 * 1024, 'z'); // parts of 5, 5 and 1 MiB
    REQUIRE(run_on(store::write_all(**parts, "big.bin", big, store::write_mode::replace)));
    CHECK(seen->take() == lines_seen{"POST 200", "PUT 200", "PUT 200", "PUT 200", "POST 200"});

    // Parts past the 800th are twice as large (s3_parts.hpp), so that any object fits in
    // S3's 10,000 parts: with parts of 1 KiB, 802 KiB and 5 bytes go up as 800 parts of
    // 1 KiB, one of 2 KiB and the last 5 bytes (803 parts without the growth).
    settings.part_bytes = settings.multipart_threshold = 1024;
    settings.parallel_parts = 4;
    auto growing = store::s3_store::open("s3://mirror/growing/", settings);
    REQUIRE(growing.has_value());
    std::string many(802 * 1024 + 5, '\0');
    for (std::size_t i = 0; i < many.size(); ++i)
        many[i] = static_cast<char>((i * 31 + i / 1024) % 253);
    REQUIRE(run_on(store::write_all(**growing, "many.bin", many, store::write_mode::replace)));
    auto events = seen->take();
    CHECK(std::count(events.begin(), events.end(), "PUT 200") == 802);
    CHECK(events.size() == 804); // and the upload's start and completion
    auto back = run_on(store::read_all(**growing, "many.bin", many.size()));
    REQUIRE(back.has_value());
    CHECK(*back == many);
}

TEST_CASE("failures reach the observer with their kind, each retry as a request of its own") {
    temp_dir tmp;
    std::string body(10'000, 'b');
    write_file(tmp / "www" / "a.bin", body);
    nginx_server nginx({tmp / "www"});
    fault_proxy proxy({.upstream_port = nginx.port()});
    event_loop run_on;
    auto seen = std::make_shared<recording_observer>();
    // Each case on a new store, so that no kept connection turns a failure into the quiet
    // second try a closed keep-alive connection gets.
    auto read_through = [&](fault f, unsigned attempts = 5) {
        proxy.fail_matching("GET", "/a.bin", std::move(f));
        auto origin = open_http(proxy.url(), seen, attempts);
        auto got = run_on(store::read_all(*origin, "a.bin", body.size()));
        CHECK_MESSAGE((attempts == 1 || (got && *got == body)), (got ? "" : got.error().message));
        return seen->take();
    };

    CHECK(read_through(close_before_headers()) == lines_seen{"GET 0 reset", "GET 200"});
    CHECK(read_through(respond_with(500)) == lines_seen{"GET 500 server_error", "GET 200"});
    CHECK(read_through(s3_error(503, "SlowDown")) == lines_seen{"GET 503 throttled", "GET 200"});
    CHECK(read_through(respond_with(429)) == lines_seen{"GET 429 throttled", "GET 200"});
    CHECK(read_through(respond_with(404), 1) == lines_seen{"GET 404"}); // an answer, not a failure
    // Cut after half its bytes, the body is resumed with a Range request pinned to its ETag.
    CHECK(read_through(short_body()) == lines_seen{"GET 200 truncated", "GET 206"});
    CHECK(read_through(stall_before_headers(1500ms)) == lines_seen{"GET 0 timeout", "GET 200"});
    // Three digits Beast reads, but no HTTP status: a malformed answer, not status 2 or 999.
    CHECK(read_through(respond_with(2)) == lines_seen{"GET 0 protocol", "GET 200"});
    CHECK(read_through(respond_with(999)) == lines_seen{"GET 0 protocol", "GET 200"});

    // Nobody listening on the port; TLS spoken to a plain HTTP server.
    auto refused = open_http("http://127.0.0.1:1/", seen, 1);
    CHECK(!run_on(store::read_all(*refused, "a.bin", 10)).has_value());
    CHECK(seen->take() == lines_seen{"GET 0 connect"});
    auto not_tls = open_http("https://127.0.0.1:" + std::to_string(nginx.port()) + "/", seen, 1);
    CHECK(!run_on(not_tls->stat("a.bin")).has_value());
    CHECK(seen->take() == lines_seen{"HEAD 0 tls"});
}
