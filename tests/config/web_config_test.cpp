#include "config/web_config.hpp"
#include <doctest/doctest.h>

#include <string>
#include <string_view>

using namespace mirror::config;

namespace {

constexpr std::string_view hash = "$2b$10$L391a6wKCTT.Mpm1.mmh6uT1oLGKGu2JYXWOolf4okeX5lZUf5Y7e";

/// Every problem's text, one per line.
std::string problems_of(std::string const& text) {
    auto parsed = parse_web_config(text, "/etc/fdl-mirror/web.yml");
    REQUIRE_FALSE(parsed.has_value());
    std::string out;
    for (auto const& problem : parsed.error())
        out += problem.text() + "\n";
    return out;
}

} // namespace

TEST_CASE("config web: exporter-toolkit's format, paths relative to the file") {
    std::string const text = "tls_server_config:\n"
                             "  cert_file: certs/server.pem\n"
                             "  key_file: /etc/ssl/private/server.key\n"
                             "  client_auth_type: RequireAndVerifyClientCert\n"
                             "  client_ca_file: ca.pem\n"
                             "  client_allowed_sans: [prometheus.example, 192.0.2.1]\n"
                             "  min_version: TLS13\n"
                             "  prefer_server_cipher_suites: false\n"
                             "http_server_config:\n"
                             "  http2: false\n"
                             "  headers:\n"
                             "    X-Frame-Options: deny\n"
                             "    Strict-Transport-Security: max-age=31536000\n"
                             "basic_auth_users:\n"
                             "  prometheus: '" + std::string(hash) + "'\n";
    auto parsed = parse_web_config(text, "/etc/fdl-mirror/web.yml");
    REQUIRE(parsed.has_value());
    CHECK(parsed->file == "/etc/fdl-mirror/web.yml");
    REQUIRE(parsed->tls.has_value());
    auto const& tls = *parsed->tls;
    CHECK(tls.cert_file == std::filesystem::path("/etc/fdl-mirror/certs/server.pem"));
    CHECK(tls.key_file == std::filesystem::path("/etc/ssl/private/server.key"));
    CHECK(tls.client_ca_file == std::filesystem::path("/etc/fdl-mirror/ca.pem"));
    CHECK(tls.client_auth_type == client_auth::require_and_verify);
    CHECK(tls.client_allowed_sans == std::vector<std::string>{"prometheus.example", "192.0.2.1"});
    CHECK(tls.min_version == tls_version::tls13);
    CHECK(tls.max_version == tls_version::tls13);
    CHECK_FALSE(tls.prefer_server_cipher_suites);
    CHECK(parsed->users.at("prometheus") == hash);
    CHECK(parsed->headers == std::vector<std::pair<std::string, std::string>>{
                                 {"Strict-Transport-Security", "max-age=31536000"}, {"X-Frame-Options", "deny"}});
}

TEST_CASE("config web: basic authentication alone, and an empty TLS section, mean plain HTTP") {
    auto parsed = parse_web_config("tls_server_config:\nbasic_auth_users:\n  a: '" + std::string(hash) + "'\n", "web.yml");
    REQUIRE(parsed.has_value());
    CHECK_FALSE(parsed->tls.has_value());
    CHECK(parsed->users.size() == 1);
    auto defaults = parse_web_config("tls_server_config: { cert_file: s.pem, key_file: s.key }\n", "web.yml");
    REQUIRE(defaults.has_value());
    CHECK(defaults->tls->client_auth_type == client_auth::none);
    CHECK(defaults->tls->min_version == tls_version::tls12); // exporter-toolkit's defaults
    CHECK(defaults->tls->max_version == tls_version::tls13);
}

TEST_CASE("config web: every problem at once, with its place, and never a secret") {
    struct {
        char const* what;
        std::string text;
        std::string expected;
    } const cases[] = {
        {"a typo", "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth: NoClientCert\n",
         "/etc/fdl-mirror/web.yml:4:3: "},
        {"no key", "tls_server_config:\n  cert_file: a\n", "tls_server_config: missing one of key or key_file"},
        {"a certificate twice", "tls_server_config:\n  cert_file: a\n  cert: '-----BEGIN CERTIFICATE-----'\n  key_file: b\n",
         "cert and cert_file are both given"},
        {"inline text that is not PEM", "tls_server_config:\n  cert: hello\n  key_file: b\n", "is not PEM text"},
        {"an unknown client_auth_type", "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: Always\n",
         "'Always' is not one of NoClientCert, RequestClientCert"},
        {"a client CA without a mode that asks", "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_ca_file: ca\n",
         "a client CA is given without a client_auth_type that asks for certificates"},
        {"a verifying mode without a CA",
         "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: RequireAndVerifyClientCert\n",
         "needs client_ca_file"},
        {"allowed SANs without client certificates",
         "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_allowed_sans: [x]\n",
         "client_allowed_sans needs a client_auth_type"},
        {"versions upside down", "tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS13\n  max_version: TLS12\n",
         "max_version TLS12 is below min_version TLS13"},
        {"cipher suites", "tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n",
         "cipher_suites is not supported by fdl-mirror"},
        {"rate limiting", "rate_limit: { interval: 1s, burst: 5 }\n", "rate_limit is not supported by fdl-mirror"},
        {"a header it cannot set", "http_server_config:\n  headers:\n    Server: nginx\n", "web.yml:3:5: "},
        {"a header value it cannot set", "http_server_config:\n  headers:\n    X-Frame-Options: allow\n",
         "'allow' is not one of deny, sameorigin"},
        {"a user name with a colon", "basic_auth_users:\n  'a:b': '" + std::string(hash) + "'\n",
         "has a ':', which basic authentication cannot carry"},
        {"not a mapping", "- a\n", "the web configuration must be a mapping of keys, not a list"},
        {"empty", "", "the web configuration is empty"},
    };
    for (auto const& c : cases) {
        CAPTURE(c.what);
        auto problems = problems_of(c.text);
        CHECK_MESSAGE(problems.find(c.expected) != std::string::npos, problems);
    }
}

TEST_CASE("config web: a password written where its hash goes is refused and not shown") {
    auto problems = problems_of("basic_auth_users:\n  prometheus: correct-horse-battery-staple\n");
    CHECK(problems.find("/etc/fdl-mirror/web.yml:2:15: basic_auth_users: user 'prometheus': the value is not a "
                        "bcrypt hash") != std::string::npos);
    CHECK(problems.find("correct-horse") == std::string::npos);
    // A hash with a wrong length or alphabet is no hash either.
    CHECK_FALSE(parse_web_config("basic_auth_users: { a: '" + std::string(hash.substr(0, 59)) + "' }\n", "w").has_value());
    CHECK_FALSE(parse_web_config("basic_auth_users: { a: '$1$" + std::string(hash.substr(3)) + "' }\n", "w").has_value());
}

TEST_CASE("config web: a bcrypt cost above 12 is refused, naming the user and the cost, not the hash") {
    // Issue 45: each wrong password costs 2^cost rounds; at cost 16 four of them kept the
    // real scraper waiting 16 s.
    std::string costly(hash);
    costly.replace(4, 2, "13");
    auto problems = problems_of("basic_auth_users:\n  prometheus: '" + costly + "'\n");
    CHECK_MESSAGE(problems.find("basic_auth_users: user 'prometheus': a bcrypt cost of 13, more than the 12 this "
                                "daemon accepts") != std::string::npos,
                  problems);
    CHECK(problems.find(costly) == std::string::npos);
    std::string at_most(hash);
    at_most.replace(4, 2, "12");
    CHECK(parse_web_config("basic_auth_users: { a: '" + at_most + "' }\n", "w").has_value());
}
