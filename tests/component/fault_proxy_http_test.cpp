// Faults between fdl-mirror and nginx (an HTTP origin), and the proxy itself checked with
// curl. http_origin_test covers the client against the in-process fault origin; here the
// server is real.

#include "tests/component/fault_proxy_helpers.hpp"

using namespace mirror;
using namespace mirror::test;
using namespace std::chrono_literals;
using io::store_errc;
namespace fs = std::filesystem;

TEST_SUITE_BEGIN("fault_proxy");

TEST_CASE("the proxy relays nginx byte for byte, and breaks the answers it is told to") {
    temp_dir tmp;
    std::string body;
    for (int i = 0; i < 10'000; ++i)
        body.push_back(static_cast<char>('a' + i % 26));
    write_file(tmp / "www" / "a.bin", body);
    nginx_server nginx({tmp / "www"});
    fault_proxy proxy({.upstream_port = nginx.port()});
    std::string url = proxy.url() + "a.bin";

    auto whole = curl("-i " + url);
    CHECK(whole.exit_code == 0);
    CHECK(whole.out.starts_with("HTTP/1.1 200"));
    CHECK(whole.out.find("\r\nETag: \"") != std::string::npos);
    CHECK(body_of(whole.out) == body);
    auto part = curl("-i -H 'Range: bytes=2-4' " + url);
    CHECK(part.out.starts_with("HTTP/1.1 206"));
    CHECK(body_of(part.out) == "cde");

    proxy.fail_request(3, s3_error(503, "SlowDown", {{"Retry-After", "2"}}));
    auto slow = curl("-i " + url);
    CHECK(slow.out.starts_with("HTTP/1.1 503"));
    CHECK(slow.out.find("\r\nRetry-After: 2\r\n") != std::string::npos);
    CHECK(body_of(slow.out).find("<Code>SlowDown</Code>") != std::string::npos);

    proxy.fail_request(4, lose_answer());
    CHECK(curl(url).exit_code == 56); // a reset, not a byte
    proxy.fail_request(5, reset_mid_body());
    auto reset = curl(url);
    CHECK(reset.exit_code == 56);
    CHECK(reset.out == body.substr(0, 5'000));
    proxy.fail_request(6, short_body());
    CHECK(curl(url).exit_code == 18); // closed with bytes remaining
    proxy.fail_request(7, padded_body());
    CHECK(curl(url).out == body + std::string(padding_bytes));
    proxy.fail_request(8, stall_before_headers(5s));
    CHECK(curl("--max-time 0.5 " + url).exit_code == 28);
    proxy.fail_request(9, close_before_headers());
    CHECK(curl(url).exit_code == 52); // empty reply

    auto seen = proxy.requests();
    REQUIRE(seen.size() == 9);
    CHECK(seen[0].status == 200);
    CHECK(seen[1].status == 206);
    CHECK(seen[1].header("range") == "bytes=2-4");
    CHECK(seen[2].status == 503);
    CHECK(seen[3].status == 0);
    // nginx served every request but the injected 503 and the closed one; the lost answer
    // among them (the stalled one is forwarded after its stall, too late to count here).
    auto log = nginx.access_log();
    std::size_t served = 0;
    for (auto at = log.find("GET /a.bin"); at != std::string::npos; at = log.find("GET /a.bin", at + 1))
        ++served;
    CHECK(served == 6);
}

namespace {

/// A sample repository served by a real nginx over plain HTTP, behind the proxy.
struct http_origin_behind_proxy {
    temp_dir tmp;
    publisher origin{tmp / "origin"};
    sample_repo sample = publish_sample(origin);
    nginx_server nginx{nginx_options{tmp / "origin"}};
    fault_proxy proxy{{.upstream_port = nginx.port()}};
    event_loop run_on;
    fs::path mirror = tmp / "mirror";

    sync::sync_report sync_once() {
        store::http_store_settings settings;
        settings.client = quick_client();
        settings.allow_plain_http = true;
        auto from = store::http_store::open(proxy.url(), settings);
        REQUIRE(from.has_value());
        auto to = open_folder(mirror, true);
        return run_on(sync::run_sync(**from, *to, {}, nullptr));
    }

    /// The GETs of `path` the proxy saw.
    std::vector<recorded_request> gets_of(std::string const& path) const {
        std::vector<recorded_request> out;
        for (auto const& q : proxy.requests())
            if (q.method == "GET" && q.target == path)
                out.push_back(q);
        return out;
    }

    /// The mirror has all of the origin, and nothing a reader would trip on.
    void check_complete(sync::sync_report const& r, std::size_t published = 4) {
        INFO(describe(r) << nginx.access_log());
        CHECK(r.exit_code() == 0);
        CHECK(r.published.size() == published);
        CHECK(ref_of(mirror, "refs/heads/main") == sample.main.back());
        CHECK(ref_of(mirror, "refs/heads/dev") == sample.dev_tip);
        auto problems = mirror_problems(mirror, tmp / "origin");
        CHECK_MESSAGE(problems.empty(), lines(problems));
        for (auto const& f : files_under(tmp / "origin"))
            CHECK_MESSAGE(fs::exists(mirror / f), f);
    }
};

} // namespace

TEST_CASE_FIXTURE(http_origin_behind_proxy, "an nginx origin behind faults: each is retried, resumed or refused") {
    std::string const data = "/data/main/population/ducklake-0002.parquet"; // 5,000 bytes, first in v2
    std::string const catalog = "/versions/" + sample.main[0] + "/ducklake.duckdb";
    SUBCASE("429 with Retry-After: 1 is waited out") {
        proxy.fail_matching("GET", "/fdl.json", respond_with(429, {{"Retry-After", "1"}}));
        auto started = std::chrono::steady_clock::now();
        auto r = sync_once();
        CHECK(std::chrono::steady_clock::now() - started >= 900ms);
        CHECK(gets_of("/fdl.json").size() == 2);
        check_complete(r);
    }
    SUBCASE("a data file reset mid-body is resumed where it stopped, pinned to nginx's ETag") {
        proxy.fail_matching("GET", data, reset_mid_body());
        check_complete(sync_once());
        auto reads = gets_of(data);
        REQUIRE(reads.size() == 2);
        CHECK(reads[1].header("Range") == "bytes=2500-"); // the proxy sent half of 5,000 bytes
        CHECK(reads[1].header("If-Range").starts_with("\""));
        CHECK(reads[1].status == 206);
    }
    SUBCASE("a catalog cut short with the connection closed is resumed") {
        proxy.fail_matching("GET", catalog, short_body());
        check_complete(sync_once());
        auto reads = gets_of(catalog);
        REQUIRE(reads.size() >= 2);
        CHECK(reads[1].header("Range").starts_with("bytes="));
        CHECK(reads[1].status == 206);
    }
    SUBCASE("a catalog stalled mid-body past the idle deadline is resumed") {
        proxy.fail_matching("GET", catalog, stall_mid_body(1500ms));
        check_complete(sync_once());
        auto reads = gets_of(catalog);
        REQUIRE(reads.size() >= 2);
        CHECK(reads[1].header("Range").starts_with("bytes="));
        CHECK(reads[1].status == 206);
    }
    SUBCASE("an answer stalled past the header deadline is asked again") {
        proxy.fail_matching("GET", "/refs.json", stall_before_headers(1500ms));
        check_complete(sync_once());
        CHECK(gets_of("/refs.json").size() == 2);
    }
    SUBCASE("a Content-Length too large, padded with junk, never lands: the version is held") {
        proxy.fail_matching("GET", data, padded_body());
        auto r = sync_once();
        INFO(describe(r));
        CHECK(r.exit_code() == 1);
        CHECK(held_for(r, sample.main[1], sync::sync_errc::size_mismatch));
        CHECK(!fs::exists(mirror / data.substr(1)));
        CHECK(mirror_problems(mirror, tmp / "origin").empty());
        check_complete(sync_once(), 3); // the rerun publishes the held three
    }
    SUBCASE("a body longer than its Content-Length never lands: the version is held") {
        proxy.fail_matching("GET", data, long_body());
        auto r = sync_once();
        INFO(describe(r));
        // A refusal, not a failure of the medium: held (exit 1), the message giving the cause.
        CHECK(r.exit_code() == 1);
        CHECK(std::any_of(r.held.begin(), r.held.end(), [&](auto const& h) {
            return h.id == sample.main[1] && h.why.message.find("more bytes than its Content-Length") != std::string::npos;
        }));
        CHECK(!fs::exists(mirror / data.substr(1)));
        CHECK(mirror_problems(mirror, tmp / "origin").empty());
        check_complete(sync_once(), 3); // the rerun publishes the held three
    }
}

TEST_CASE("a certificate for another host is refused before any request, and nothing is copied") {
    temp_dir tmp;
    publisher origin(tmp / "origin");
    auto sample = publish_sample(origin);
    auto ca = make_test_ca(tmp / "tls");
    auto elsewhere = issue_server_cert(ca, "elsewhere", {.subject_alt_name = "DNS:not-localhost.example"});
    event_loop run_on;

    SUBCASE("an HTTPS origin") {
        nginx_server nginx{nginx_options{tmp / "origin"}};
        for (bool right_name : {false, true}) {
            CAPTURE(right_name);
            auto cert = right_name ? issued_cert{ca.server_cert, ca.server_key} : elsewhere;
            fault_proxy front({.upstream_port = nginx.port(), .tls_cert = cert.cert, .tls_key = cert.key});
            auto from = store::http_store::open(front.url(), {.client = {.ca_bundle = ca.ca_cert}});
            REQUIRE(from.has_value());
            fs::path mirror = tmp / (right_name ? "right" : "wrong");
            auto to = open_folder(mirror, true);
            auto r = run_on(sync::run_sync(**from, *to, {}, nullptr));
            INFO(describe(r));
            if (right_name) {
                CHECK(r.exit_code() == 0); // the same front with the right name: the refusal is the name's
                CHECK(ref_of(mirror, "refs/heads/main") == sample.main.back());
                continue;
            }
            REQUIRE(r.fatal.has_value());
            CHECK(r.fatal->code == store_errc::rejected);
            CHECK(r.fatal->message.find("the TLS certificate does not verify") != std::string::npos);
            // The reason is named: the certificate is another host's.
            CHECK(r.fatal->message.find("(it is not for the host asked for: hostname mismatch)") != std::string::npos);
            CHECK(front.requests().empty());
            CHECK(front.connections() == 1); // refused, not retried
            CHECK(files_under(mirror).empty());
        }
    }
    SUBCASE("an S3 mirror") {
        s3rver_server server{{.buckets = {"mirror"}}};
        auto from = open_folder(tmp / "origin", false);
        for (bool right_name : {false, true}) {
            CAPTURE(right_name);
            auto cert = right_name ? issued_cert{ca.server_cert, ca.server_key} : elsewhere;
            fault_proxy front({.upstream_port = server.port(), .tls_cert = cert.cert, .tls_key = cert.key});
            store::s3_store_settings settings;
            settings.access.creds = {std::string(s3rver_server::access_key_id),
                                     std::string(s3rver_server::secret_access_key), std::nullopt};
            settings.access.endpoint = front.endpoint();
            settings.access.path_style = true;
            settings.client = quick_client();
            settings.client.ca_bundle = ca.ca_cert;
            std::string prefix = right_name ? "right/" : "wrong/";
            auto to = store::s3_store::open("s3://mirror/" + prefix, settings);
            REQUIRE(to.has_value());
            auto r = run_on(sync::run_sync(*from, **to, {}, nullptr));
            INFO(describe(r));
            if (right_name) {
                CHECK(r.exit_code() == 0);
                CHECK(fs::exists(server.data_dir() / "mirror" / "right" / "fdl.json._S3rver_object"));
                continue;
            }
            REQUIRE(r.fatal.has_value());
            CHECK(r.fatal->code == store_errc::rejected);
            CHECK(r.fatal->message.find("the TLS certificate does not verify") != std::string::npos);
            CHECK(r.fatal->message.find("(it is not for the host asked for: hostname mismatch)") != std::string::npos);
            CHECK(front.requests().empty());
            CHECK(front.connections() == 1);
            CHECK(!fs::exists(server.data_dir() / "mirror" / "wrong"));
        }
    }
}

TEST_SUITE_END();
