#include "config/listen_address.hpp"
#include <doctest/doctest.h>

#include <string>
#include <string_view>

using namespace mirror::config;
using namespace std::string_view_literals;

TEST_CASE("config listen: host:port for names, IPv4 and bracketed IPv6") {
    struct {
        std::string_view text;
        std::string_view host;
        int port;
    } const cases[] = {
        {"127.0.0.1:9464", "127.0.0.1", 9464},
        {"0.0.0.0:1", "0.0.0.0", 1},
        {"127.0.0.1:0", "127.0.0.1", 0}, // any free port
        {"localhost:65535", "localhost", 65535},
        {"metrics.internal-1.example:80", "metrics.internal-1.example", 80},
        {"[::1]:9464", "::1", 9464},
        {"[::]:9464", "::", 9464},
        {"[fe80::1%eth0]:9464", "fe80::1%eth0", 9464},
        {"[::ffff:192.0.2.1]:8080", "::ffff:192.0.2.1", 8080},
    };
    for (auto const& c : cases) {
        CAPTURE(c.text);
        auto address = parse_listen_address(c.text);
        REQUIRE(address.has_value());
        CHECK(address->host == c.host);
        CHECK(address->port == c.port);
        CHECK(to_string(*address) == c.text);
    }
}

TEST_CASE("config listen: refused without a host or port, with a bad port, or unbracketed IPv6") {
    for (auto text : {""sv,
                      "9464"sv,
                      ":9464"sv,
                      "localhost"sv,
                      "localhost:"sv,
                      "localhost:65536"sv,
                      "localhost:-1"sv,
                      "localhost:00"sv,
                      "localhost:+80"sv,
                      "localhost:80x"sv,
                      "::1:9464"sv,
                      "[::1]"sv,
                      "[::1]9464"sv,
                      "[::1:9464"sv,
                      "::1]:9464"sv,
                      "[]:9464"sv,
                      "[localhost]:9464"sv,
                      "[1.2.3.4]:80"sv,
                      "local host:80"sv,
                      "host_name:80"sv,
                      "-host:80"sv,
                      "host.:80"sv,
                      "http://host:80"sv,
                      "host:80/"sv,
                      "[fe80::1%]:80"sv}) {
        CAPTURE(std::string(text));
        CHECK_FALSE(parse_listen_address(text).has_value());
    }
}
