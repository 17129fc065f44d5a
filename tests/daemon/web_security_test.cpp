// Basic authentication under a flood of wrong passwords (issue 45): comparisons wait on a
// bounded queue (more are answered busy, never queued), only successful logins are
// remembered, so no number of wrong passwords pushes a scraper's login out.

#include "daemon/status/web_security.hpp"

#include <doctest/doctest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <crypt.h>

#include <algorithm>
#include <deque>

#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace mirror;
using namespace mirror::daemon;

namespace {

/// A bcrypt hash of `password` at `cost`, made with libxcrypt as htpasswd -B would.
std::string bcrypt_of(std::string const& password, int cost) {
    char salt[CRYPT_GENSALT_OUTPUT_SIZE];
    REQUIRE(crypt_gensalt_rn("$2b$", static_cast<unsigned long>(cost), nullptr, 0, salt, sizeof salt) != nullptr);
    crypt_data data{};
    char const* hashed = crypt_r(password.c_str(), salt, &data);
    REQUIRE(hashed != nullptr);
    return hashed;
}

std::string basic(std::string const& user, std::string const& password) {
    static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string in = user + ":" + password, out;
    for (std::size_t i = 0; i < in.size(); i += 3) {
        unsigned n = static_cast<unsigned char>(in[i]) << 16;
        if (i + 1 < in.size())
            n |= static_cast<unsigned char>(in[i + 1]) << 8;
        if (i + 2 < in.size())
            n |= static_cast<unsigned char>(in[i + 2]);
        out += alphabet[(n >> 18) & 63];
        out += alphabet[(n >> 12) & 63];
        out += i + 1 < in.size() ? alphabet[(n >> 6) & 63] : '=';
        out += i + 2 < in.size() ? alphabet[n & 63] : '=';
    }
    return "Basic " + out;
}

} // namespace

TEST_CASE("basic authentication: wrong passwords wait on a bounded queue and never push a scraper's login out") {
    auto settings = std::make_shared<web_settings>();
    settings->config.users.emplace("prometheus", bcrypt_of("scrape-secret", 4));
    web_security security(std::nullopt, settings, [](bool, std::string const&) {});
    net::io_context io;
    std::deque<std::string> headers; // alive until each answer: authorize keeps a view of its header
    auto ask = [&](std::string header, std::vector<auth_result>& into) {
        headers.push_back(std::move(header));
        net::co_spawn(io, security.authorize(*settings, headers.back()),
                      [&into](std::exception_ptr e, auth_result r) {
                          REQUIRE_FALSE(e);
                          into.push_back(r);
                      });
    };

    std::vector<auth_result> first;
    ask(basic("prometheus", "scrape-secret"), first);
    io.run();
    REQUIRE(first == std::vector<auth_result>{auth_result::allowed});

    // 40 wrong passwords at once, from 40 users known and unknown: at most
    // max_pending_comparisons are compared, the rest are answered busy at once. The
    // scraper's login, asked for in the middle of them, is answered from what it did
    // before, without waiting on any of them.
    std::vector<auth_result> flood, scraper;
    for (int i = 0; i < 40; ++i)
        ask(basic(i % 2 ? "prometheus" : "nobody-" + std::to_string(i), "wrong-" + std::to_string(i)), flood);
    ask(basic("prometheus", "scrape-secret"), scraper);
    io.restart();
    io.run();
    REQUIRE(flood.size() == 40);
    auto count = [&](auth_result r) { return std::count(flood.begin(), flood.end(), r); };
    CHECK(count(auth_result::refused) == static_cast<long>(web_security::max_pending_comparisons));
    CHECK(count(auth_result::busy) == 40 - static_cast<long>(web_security::max_pending_comparisons));
    CHECK(count(auth_result::allowed) == 0);
    CHECK(scraper == std::vector<auth_result>{auth_result::allowed});

    // 2,000 more wrong passwords, a few at a time (each compared; cost 4 keeps it quick):
    // more than the 1,024 logins remembered, and the scraper's is still remembered, since
    // refusals never are.
    std::vector<auth_result> wrong;
    for (int i = 0; i < 2000; ++i) {
        ask(basic("nobody", "guess-" + std::to_string(i)), wrong);
        if (i % 4 == 3) { // within the queue's bound
            io.restart();
            io.run();
        }
    }
    io.restart();
    io.run();
    CHECK(std::count(wrong.begin(), wrong.end(), auth_result::refused) == 2000);
    std::vector<auth_result> again;
    for (int i = 0; i < 8; ++i) // more than the queue holds: none of them waits on a comparison
        ask(basic("prometheus", "scrape-secret"), again);
    io.restart();
    io.run();
    CHECK(again == std::vector<auth_result>(8, auth_result::allowed));
}
