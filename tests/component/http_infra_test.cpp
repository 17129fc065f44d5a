// The HTTP(S) test infrastructure itself: a real nginx over HTTP and HTTPS with
// throwaway CAs, and the in-process fault server answering each fault as programmed.
// curl is the client here, so that these tests do not depend on the client under test.

#include "tests/support/fault_http_server.hpp"
#include "tests/support/nginx.hpp"
#include "tests/support/local_servers.hpp"
#include "tests/support/publisher.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_ca.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

using namespace mirror::test;
using namespace std::chrono_literals;

namespace {

/// curl's exit code (0, 18 partial body, 28 timeout, 52 empty reply, 60 bad certificate)
/// and stdout (with -i, the response head then the body).
command_output curl(std::string const& args) { return run_shell("curl -s --max-time 10 " + args + " 2>/dev/null"); }

/// The body of a `curl -i` output (after the last response head, for -L).
std::string body_of(std::string const& out) {
    auto end = out.rfind("\r\n\r\n");
    return end == std::string::npos ? "" : out.substr(end + 4);
}

/// A header's value in a `curl -i` output, "" when absent (names as the server sent them).
std::string header_of(std::string const& out, std::string const& name) {
    auto at = out.find("\r\n" + name + ": ");
    if (at == std::string::npos)
        return "";
    at += name.size() + 4;
    return out.substr(at, out.find("\r\n", at) - at);
}

/// Sends `request` on a new connection and returns what comes back until the server closes
/// or is quiet for `quiet`.
std::string raw_exchange(std::uint16_t port, std::string const& request, std::chrono::milliseconds quiet = 500ms) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval timeout{0, static_cast<suseconds_t>(std::chrono::microseconds(quiet).count())};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    std::string reply;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
        ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
        char chunk[4096];
        for (ssize_t n; (n = ::recv(fd, chunk, sizeof chunk, 0)) > 0;)
            reply.append(chunk, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return reply;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

TEST_CASE("nginx is installed, since scripts/setup installs it") {
    CHECK(nginx_available());
}

TEST_CASE("nginx_server fails with nginx's own message when nginx cannot start") {
    temp_dir tmp;
    CHECK_THROWS_WITH_AS(nginx_server({tmp.path(), {}, {}, "no_such_directive on;"}),
                         doctest::Contains("unknown directive \"no_such_directive\""), std::runtime_error);
}

TEST_CASE("nginx serves a folder over HTTP with ETag, ranges, 304 and keep-alive") {
    temp_dir tmp;
    write_file(tmp / "www" / "data" / "a.bin", "0123456789");
    nginx_server server({tmp / "www"});
    INFO(server.error_log());
    CHECK(server.url() == "http://127.0.0.1:" + std::to_string(server.port()) + "/");

    auto full = curl("-i " + server.url() + "data/a.bin");
    REQUIRE(full.exit_code == 0);
    CHECK(full.out.starts_with("HTTP/1.1 200"));
    CHECK(body_of(full.out) == "0123456789");
    CHECK(header_of(full.out, "Content-Length") == "10");
    std::string etag = header_of(full.out, "ETag");
    REQUIRE(etag.starts_with("\""));

    auto same = curl("-i -H 'If-None-Match: " + etag + "' " + server.url() + "data/a.bin");
    CHECK(same.out.starts_with("HTTP/1.1 304"));
    auto part = curl("-i -H 'Range: bytes=2-4' " + server.url() + "data/a.bin");
    CHECK(part.out.starts_with("HTTP/1.1 206"));
    CHECK(body_of(part.out) == "234");
    CHECK(header_of(part.out, "Content-Range") == "bytes 2-4/10");

    CHECK(curl("-i " + server.url() + "data/missing").out.starts_with("HTTP/1.1 404"));
    CHECK(curl("-i " + server.url() + "data/").out.starts_with("HTTP/1.1 403")); // autoindex off

    // One curl, two URLs: one connection, two requests on it.
    curl(server.url() + "data/a.bin " + server.url() + "data/a.bin");
    // nginx writes the line once the request is done, which may be just after curl returns.
    std::string const second = " 2 200 10 \"GET /data/a.bin HTTP/1.1\"";
    for (int tries = 0; tries < 100 && server.access_log().find(second) == std::string::npos; ++tries)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(server.access_log().find(second) != std::string::npos);
}

TEST_CASE("nginx serves HTTPS that only its own CA's clients trust") {
    temp_dir tmp;
    write_file(tmp / "www" / "a.txt", "over TLS\n");
    auto tls = make_test_ca(tmp / "pki");
    auto stranger = make_test_ca(tmp / "pki", "stranger");
    nginx_server server({tmp / "www", tls.server_cert, tls.server_key});
    INFO(server.error_log());
    CHECK(server.url() == "https://localhost:" + std::to_string(server.port()) + "/");

    auto trusted = curl("--cacert " + tls.ca_cert.string() + " " + server.url() + "a.txt");
    CHECK(trusted.exit_code == 0);
    CHECK(trusted.out == "over TLS\n");
    auto by_address = curl("--cacert " + tls.ca_cert.string() + " https://127.0.0.1:" +
                           std::to_string(server.port()) + "/a.txt");
    CHECK(by_address.exit_code == 0); // the certificate names IP:127.0.0.1 too
    CHECK(curl("--cacert " + stranger.ca_cert.string() + " " + server.url() + "a.txt").exit_code == 60);
}

TEST_CASE("curl refuses an expired certificate and one for another name") {
    temp_dir tmp;
    write_file(tmp / "www" / "a.txt", "x");
    auto tls = make_test_ca(tmp / "pki");
    auto expired = issue_server_cert(tls, "expired", cert_options{.expired = true});
    auto elsewhere = issue_server_cert(tls, "elsewhere", cert_options{.subject_alt_name = "DNS:elsewhere.example"});
    for (auto const& cert : {expired, elsewhere}) {
        CAPTURE(cert.cert);
        nginx_server server({tmp / "www", cert.cert, cert.key});
        CHECK(curl("--cacert " + tls.ca_cert.string() + " " + server.url() + "a.txt").exit_code == 60);
        CHECK(curl("-k " + server.url() + "a.txt").out == "x"); // served, only not trusted
    }
}

TEST_CASE("nginx runs the test's own locations for redirects and errors") {
    temp_dir tmp;
    write_file(tmp / "www" / "a.txt", "moved here\n");
    nginx_server server({tmp / "www", {}, {},
                         "location = /moved { return 301 /a.txt; }\n"
                         "location = /busy { add_header Retry-After 2 always; return 503; }"});
    INFO(server.error_log());
    auto moved = curl("-i " + server.url() + "moved");
    CHECK(moved.out.starts_with("HTTP/1.1 301"));
    CHECK(header_of(moved.out, "Location").ends_with("/a.txt"));
    CHECK(body_of(curl("-i -L " + server.url() + "moved").out) == "moved here\n");
    auto busy = curl("-i " + server.url() + "busy");
    CHECK(busy.out.starts_with("HTTP/1.1 503"));
    CHECK(header_of(busy.out, "Retry-After") == "2");
}

TEST_CASE("the fault server serves objects with ETag, HEAD, 304, ranges and 404") {
    fault_http_server server({{"/a.bin", "0123456789"}});
    std::string url = server.url() + "a.bin";
    std::string etag = fault_http_server::etag_of("0123456789");

    auto full = curl("-i " + url);
    CHECK(full.out.starts_with("HTTP/1.1 200"));
    CHECK(body_of(full.out) == "0123456789");
    CHECK(header_of(full.out, "ETag") == etag);
    CHECK(header_of(full.out, "Content-Length") == "10");
    auto head = curl("-I " + url);
    CHECK(head.exit_code == 0);
    CHECK(header_of(head.out, "Content-Length") == "10");
    CHECK(body_of(head.out).empty());
    CHECK(curl("-i -H 'If-None-Match: " + etag + "' " + url).out.starts_with("HTTP/1.1 304"));
    CHECK(curl("-i -H 'If-None-Match: \"other\"' " + url).out.starts_with("HTTP/1.1 200"));

    auto part = curl("-i -H 'Range: bytes=2-4' " + url);
    CHECK(part.out.starts_with("HTTP/1.1 206"));
    CHECK(body_of(part.out) == "234");
    CHECK(header_of(part.out, "Content-Range") == "bytes 2-4/10");
    CHECK(body_of(curl("-i -H 'Range: bytes=7-' " + url).out) == "789");
    CHECK(body_of(curl("-i -H 'Range: bytes=-2' " + url).out) == "89");
    CHECK(curl("-i -H 'Range: bytes=10-' " + url).out.starts_with("HTTP/1.1 416"));

    CHECK(curl("-i " + server.url() + "missing").out.starts_with("HTTP/1.1 404"));
    CHECK(curl("-i -X DELETE " + url).out.starts_with("HTTP/1.1 405"));
    server.put("/b.bin", "new");
    CHECK(curl(server.url() + "b.bin?x=1").out == "new");
}

TEST_CASE("the fault server answers each programmed status once, then serves") {
    struct programmed {
        fault f;
        std::string status_line, header, value;
    };
    std::vector<programmed> cases{
        {respond_with(429, {{"Retry-After", "3"}}), "HTTP/1.1 429 Too Many Requests", "Retry-After", "3"},
        {respond_with(500), "HTTP/1.1 500 Internal Server Error", "", ""},
        {respond_with(503, {{"Retry-After", "1"}}), "HTTP/1.1 503 Service Unavailable", "Retry-After", "1"},
        {respond_with(404), "HTTP/1.1 404 Not Found", "", ""},
        {respond_with(403), "HTTP/1.1 403 Forbidden", "", ""},
        {redirect_to(301, "/elsewhere"), "HTTP/1.1 301 Moved Permanently", "Location", "/elsewhere"},
        {redirect_to(302, "http://127.0.0.1:1/x"), "HTTP/1.1 302 Found", "Location", "http://127.0.0.1:1/x"},
    };
    for (auto const& c : cases) {
        CAPTURE(c.status_line);
        fault_http_server server({{"/a", "body"}});
        server.fail_path("/a", c.f, 1);
        auto faulty = curl("-i " + server.url() + "a");
        CHECK(faulty.out.starts_with(c.status_line + "\r\n"));
        if (!c.header.empty())
            CHECK(header_of(faulty.out, c.header) == c.value);
        CHECK(curl(server.url() + "a").out == "body");
    }
}

TEST_CASE("the fault server breaks connections and bodies as programmed") {
    fault_http_server server({{"/a", "0123456789"}});
    std::string url = server.url() + "a";

    server.fail_request(1, close_before_headers());
    CHECK(curl(url).exit_code == 52); // empty reply from server

    server.fail_request(2, short_body());
    auto cut = curl("-i " + url);
    CHECK(cut.exit_code == 18); // transfer closed with bytes remaining
    CHECK(body_of(cut.out) == "01234");

    server.fail_request(3, long_body());
    auto excess = raw_exchange(server.port(), "GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(excess.find("Content-Length: 10\r\n") != std::string::npos);
    CHECK(excess.ends_with("\r\n\r\n0123456789EXCESS BYTES AFTER THE BODY\r\n"));

    server.fail_request(4, stall_before_headers(1500ms));
    CHECK(curl("--max-time 0.5 " + url).exit_code == 28); // timed out

    server.fail_request(5, stall_mid_body(300ms));
    auto start = std::chrono::steady_clock::now();
    auto slow = curl("-i " + url);
    CHECK(seconds_since(start) >= 0.3);
    CHECK(slow.exit_code == 0);
    CHECK(body_of(slow.out) == "0123456789");

    server.fail_request(6, stall_mid_body(1500ms));
    auto stalled = curl("-i --max-time 0.5 " + url);
    CHECK(stalled.exit_code == 28);
    CHECK(body_of(stalled.out) == "01234");

    CHECK(curl(url).out == "0123456789"); // request 7: no fault left
}

TEST_CASE("the fault server records requests and counts connections") {
    fault_http_server server({{"/a", "A"}, {"/b", "B"}});
    server.fail_request(2, respond_with(503));
    // One curl, three URLs: one kept-alive connection.
    auto both = curl("-H 'X-Probe: yes' " + server.url() + "a " + server.url() + "b " + server.url() + "a");
    CHECK(both.out == "Ainjected 503\nA");
    CHECK(server.connections() == 1);
    auto seen = server.requests();
    REQUIRE(seen.size() == 3);
    CHECK(seen[0].method == "GET");
    CHECK(seen[1].target == "/b");
    CHECK(seen[2].connection == 1);
    CHECK(seen[0].header("x-probe") == "yes");
    CHECK(seen[0].header("absent").empty());

    // The client's "Connection: close" is honoured: the next request opens another.
    curl("-H 'Connection: close' " + server.url() + "a");
    curl(server.url() + "a");
    CHECK(server.connections() == 3);
    CHECK(server.requests().back().connection == 3);
}
