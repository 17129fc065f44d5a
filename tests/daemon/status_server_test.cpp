#include "daemon/status/status_server.hpp"

#include "core/io/errors.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <doctest/doctest.h>

#include <thread>

using namespace mirror;
using tcp = net::ip::tcp;

namespace {

/// One raw HTTP/1.1 exchange with the server, from a plain blocking socket on another
/// thread (the server runs on the test's io_context).
std::string ask(std::uint16_t port, std::string request) {
    net::io_context io;
    tcp::socket socket(io);
    socket.connect({net::ip::make_address("127.0.0.1"), port});
    net::write(socket, net::buffer(request));
    std::string out;
    boost::system::error_code ec;
    char buffer[4096];
    while (auto n = socket.read_some(net::buffer(buffer), ec))
        out.append(buffer, n);
    return out;
}

struct running_server {
    net::io_context io{1};
    bool ready = false;
    std::unique_ptr<daemon::status_server> server;
    std::thread thread;

    running_server() {
        auto bound = daemon::status_server::bind(io.get_executor(), {"127.0.0.1", 0},
                                                 {[] { return std::string("fdl_mirror_repositories 2\n"); },
                                                  [this] { return ready ? std::string() : std::string("starting"); },
                                                  [] { return std::string("{\"repositories\":[]}\n"); }});
        REQUIRE(bound);
        server = std::move(*bound);
        server->start();
        thread = std::thread([this] { io.run(); });
    }
    ~running_server() {
        net::post(io, [this] { server->stop(); });
        io.stop();
        thread.join();
    }
    std::string get(std::string const& path, std::string const& method = "GET") {
        return get_as(path, "127.0.0.1:" + std::to_string(server->port()), method);
    }
    std::string get_as(std::string const& path, std::string const& host, std::string const& method = "GET") {
        return ask(server->port(), method + " " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n");
    }
};

} // namespace

TEST_CASE("the status server serves /metrics, /status, /healthz and /readyz, and nothing else") {
    running_server s;
    CHECK(s.server->port() != 0);
    auto metrics = s.get("/metrics");
    CHECK(metrics.starts_with("HTTP/1.1 200"));
    CHECK(metrics.find("Content-Type: text/plain; version=0.0.4") != std::string::npos);
    CHECK(metrics.ends_with("\r\n\r\nfdl_mirror_repositories 2\n"));
    CHECK(s.get("/healthz").starts_with("HTTP/1.1 200"));
    auto status = s.get("/status");
    CHECK(status.starts_with("HTTP/1.1 200"));
    CHECK(status.find("Content-Type: application/json") != std::string::npos);
    CHECK(status.ends_with("\r\n\r\n{\"repositories\":[]}\n"));
    auto unready = s.get("/readyz");
    CHECK(unready.starts_with("HTTP/1.1 503"));
    CHECK(unready.ends_with("\r\n\r\nnot ready: starting\n")); // the reason, as the source gives it
    net::post(s.io, [&] { s.ready = true; });
    CHECK(s.get("/readyz?verbose").starts_with("HTTP/1.1 200"));
    CHECK(s.get("/").starts_with("HTTP/1.1 404"));
    CHECK(s.get("/metrics/../etc/passwd").starts_with("HTTP/1.1 404"));
    auto post = s.get("/metrics", "POST");
    CHECK(post.starts_with("HTTP/1.1 405"));
    CHECK(post.find("Allow: GET, HEAD") != std::string::npos);
    auto head = s.get("/metrics", "HEAD");
    CHECK(head.starts_with("HTTP/1.1 200"));
    CHECK(head.find("fdl_mirror_repositories") == std::string::npos);
}

TEST_CASE("binding an address in use, or one that does not resolve, fails naming it") {
    net::io_context io{1};
    tcp::acceptor taken(io, {net::ip::make_address("127.0.0.1"), 0});
    auto port = taken.local_endpoint().port();
    auto second = daemon::status_server::bind(io.get_executor(), {"127.0.0.1", port}, {});
    REQUIRE(!second);
    CHECK(second.error().message.find("listen 127.0.0.1:" + std::to_string(port)) != std::string::npos);
    auto nowhere = daemon::status_server::bind(io.get_executor(), {"no-such-host.invalid", 9464}, {});
    REQUIRE(!nowhere);
    CHECK(nowhere.error().message.find("no-such-host.invalid") != std::string::npos);
}

TEST_CASE("/status answers clients on this host only: it carries each repository's last error") {
    auto at = [](char const* text) { return net::ip::make_address(text); };
    CHECK(daemon::serves_status_to(at("127.0.0.1")));
    CHECK(daemon::serves_status_to(at("127.3.4.5")));
    CHECK(daemon::serves_status_to(at("::1")));
    CHECK(daemon::serves_status_to(at("::ffff:127.0.0.1")));
    CHECK_FALSE(daemon::serves_status_to(at("10.0.0.7")));
    CHECK_FALSE(daemon::serves_status_to(at("192.168.1.20")));
    CHECK_FALSE(daemon::serves_status_to(at("0.0.0.0")));
    CHECK_FALSE(daemon::serves_status_to(at("::ffff:10.0.0.7")));
    CHECK_FALSE(daemon::serves_status_to(at("2001:db8::1")));
    CHECK_FALSE(daemon::serves_status_to(at("fe80::1")));
}

TEST_CASE("control requests (POST /trigger) act for this host only, and never for another site's page") {
    auto const here = net::ip::make_address("127.0.0.1");
    CHECK(daemon::control_refusal(here, "127.0.0.1:9464", "", false).empty()); // curl, fdl-mirror trigger
    CHECK(daemon::control_refusal(here, "localhost:9464", "http://localhost:9464", true).empty());
    CHECK(daemon::control_refusal(here, "[::1]:9464", "http://[::1]:9464", true).empty());
    // A page of another site, in a browser on this host: its form posts to 127.0.0.1.
    for (char const* origin : {"http://evil.example", "https://evil.example:443", "null", "", "file://", "127.0.0.1"}) {
        CAPTURE(origin);
        CHECK(daemon::control_refusal(here, "127.0.0.1:9464", origin, true).find("page of another site") !=
              std::string::npos);
    }
    CHECK(daemon::control_refusal(here, "rebind.example:9464", "", false).find("Host: localhost") != std::string::npos);
    CHECK(daemon::control_refusal(net::ip::make_address("10.0.0.7"), "127.0.0.1", "", false).find("this host only") !=
          std::string::npos);
}

TEST_CASE("/status answers only requests whose Host names this host: no DNS rebinding") {
    for (char const* host : {"localhost", "LOCALHOST:9464", "localhost.", "app.localhost:1", "127.0.0.1", "127.0.0.1:9464",
                             "[::1]:9464", "::1", ""}) {
        CAPTURE(host);
        CHECK(daemon::names_this_host(host));
    }
    for (char const* host : {"evil.example", "evil.example:9464", "localhost.evil.example", "10.0.0.7:9464",
                             "[2001:db8::1]:80", "[::1", "0.0.0.0"}) {
        CAPTURE(host);
        CHECK_FALSE(daemon::names_this_host(host));
    }
    running_server s;
    CHECK(s.get_as("/status", "localhost:" + std::to_string(s.server->port())).starts_with("HTTP/1.1 200"));
    auto rebound = s.get_as("/status", "rebind.example:" + std::to_string(s.server->port()));
    CHECK(rebound.starts_with("HTTP/1.1 403"));
    CHECK(rebound.find("Host: localhost or a loopback address only") != std::string::npos);
    // /metrics is for Prometheus, which scrapes by any name.
    CHECK(s.get_as("/metrics", "monitor.example:9464").starts_with("HTTP/1.1 200"));
}

TEST_CASE("the status server says Connection: close on the last request a connection may make") {
    // 101 kept-alive requests sent at once: the 100th answer says the connection closes
    // (a client that sees no such word sends the next into a closing socket), and the
    // 101st is not answered.
    running_server s;
    std::string requests;
    for (int i = 0; i < 101; ++i)
        requests += "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    auto answers = ask(s.server->port(), requests);
    std::size_t count = 0;
    for (auto at = answers.find("HTTP/1.1 200"); at != std::string::npos; at = answers.find("HTTP/1.1 200", at + 1))
        ++count;
    CHECK(count == 100);
    auto last = answers.rfind("HTTP/1.1 200");
    REQUIRE(last != std::string::npos);
    CHECK(answers.find("Connection: close", last) != std::string::npos);
    CHECK(answers.substr(0, last).find("Connection: close") == std::string::npos);
}

TEST_CASE("a listener holds at most its connections from one address, and makes room past its total by closing the "
          "oldest idle one of the busiest address, so a scraper still gets in") {
    // Issue 45: 300 idle connections exhausted the daemon's descriptors, and 1,500 each
    // sending most of a body took it to 402 MB.
    net::io_context io{1};
    auto bound = daemon::status_server::bind(io.get_executor(), {"127.0.0.1", 0},
                                             {[] { return std::string("fdl_mirror_repositories 2\n"); },
                                              [] { return std::string(); }, [] { return std::string("{}\n"); }},
                                             nullptr, daemon::server_role::endpoints,
                                             daemon::connection_limits{3, 2});
    REQUIRE(bound);
    auto server = std::move(*bound);
    server->start();
    std::thread thread([&] { io.run(); });
    auto const port = server->port();
    net::io_context client;
    auto open_from = [&](char const* source) {
        tcp::socket socket(client);
        socket.open(tcp::v4());
        socket.bind({net::ip::make_address(source), 0});
        socket.connect({net::ip::make_address("127.0.0.1"), port});
        return socket;
    };
    // What the server does with a request on `socket`: its answer's first line, or "" when
    // it closed the connection unanswered.
    auto answer_on = [](tcp::socket& socket) {
        boost::system::error_code ec;
        net::write(socket, net::buffer(std::string("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")),
                   ec);
        std::string out;
        char buffer[256];
        while (auto n = socket.read_some(net::buffer(buffer), ec))
            out.append(buffer, n);
        return out.substr(0, out.find("\r\n"));
    };
    auto settle = [] { std::this_thread::sleep_for(std::chrono::milliseconds(100)); }; // the server accepts
    // Two idle connections from one address: its share. A third is closed unanswered.
    auto oldest = open_from("127.0.0.2");
    settle();
    auto second = open_from("127.0.0.2");
    settle();
    auto third = open_from("127.0.0.2");
    CHECK(answer_on(third).empty());
    // A third address fills the total; a fourth makes room by closing the oldest idle
    // connection of the address holding the most, and is answered.
    auto other = open_from("127.0.0.3");
    settle();
    auto scraper = open_from("127.0.0.1");
    CHECK(answer_on(scraper) == "HTTP/1.1 200 OK");
    CHECK(answer_on(oldest).empty());
    CHECK(answer_on(second) == "HTTP/1.1 200 OK");
    CHECK(server->refused_connections() == 2);
    net::post(io, [&] { server->stop(); });
    io.stop();
    thread.join();
}
