#include "core/http/redirects.hpp"
#include <doctest/doctest.h>

using namespace mirror::http;
namespace ip = boost::asio::ip;

namespace {
location at(std::string const& url) {
    auto parsed = parse_location(url);
    REQUIRE_MESSAGE(parsed.has_value(), url);
    return *parsed;
}
} // namespace

TEST_CASE("internal addresses: loopback, private, link-local, shared, multicast, unspecified, IPv4 inside IPv6") {
    for (char const* text : {"127.0.0.1", "127.255.0.9", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1",
                             "169.254.169.254", "100.64.0.1", "100.127.255.254", "0.0.0.0", "0.1.2.3", "224.0.0.1",
                             "255.255.255.255", "::1", "::", "fe80::1", "fc00::1", "fd12:3456::1", "ff02::1",
                             "::ffff:169.254.169.254", "::ffff:10.0.0.1",
                             // IPv4 carried in IPv6: compatible, NAT64, 6to4, Teredo (client flipped)
                             "::169.254.169.254", "::10.0.0.1", "64:ff9b::a9fe:a9fe", "64:ff9b::7f00:1",
                             "64:ff9b:1::808:808", "2002:a9fe:a9fe::1", "2002:c0a8:101::", "fec0::1",
                             "2001:0:4136:e378:8000:63bf:f5ff:fffe", "2001:0:a00:1::1"}) {
        CAPTURE(text);
        CHECK(is_internal_address(ip::make_address(text)));
    }
    for (char const* text : {"8.8.8.8", "172.15.255.255", "172.32.0.1", "192.167.1.1", "100.63.255.255",
                             "100.128.0.1", "169.253.1.1", "11.0.0.1", "2001:db8::1", "2606:4700::1111",
                             "::ffff:93.184.216.34", "64:ff9b::808:808", "2002:808:808::1", "::8.8.8.8",
                             "2001:0:4136:e378:8000:63bf:3fff:fdd2"}) {
        CAPTURE(text);
        CHECK(!is_internal_address(ip::make_address(text)));
    }
}

TEST_CASE("a redirect stays on the origin's scheme, host and port unless its host is allowed") {
    auto const start = at("https://data.example.org/lake/fdl.json");
    auto same = decide_redirect(start, false, at("https://DATA.example.org:443/other/fdl.json"), {});
    CHECK(same.follow);
    CHECK(!same.public_addresses_only);

    for (char const* elsewhere : {"https://cdn.example.org/x", "https://data.example.org:8443/x",
                                  "https://169.254.169.254/latest/meta-data/", "https://localhost/admin"}) {
        CAPTURE(elsewhere);
        auto refused = decide_redirect(start, false, at(elsewhere), {});
        CHECK(!refused.follow);
        CHECK(refused.why.find("a redirect to another host or port (") != std::string::npos);
        CHECK(refused.why.find("redirect_hosts, --allow-redirect-to") != std::string::npos);
    }
    auto downgrade = decide_redirect(start, false, at("http://data.example.org/x"), {"data.example.org"});
    CHECK(!downgrade.follow);
    CHECK(downgrade.why.find("a redirect from https to http") != std::string::npos);
}

TEST_CASE("an allowed host is followed, on public addresses only unless the origin is internal") {
    auto const start = at("https://data.example.org/lake/fdl.json");
    std::vector<std::string> const allowed = {"cdn.example.org", "objects.example.net:8443", "[2001:db8::7]"};
    auto cdn = decide_redirect(start, false, at("https://CDN.example.org:9000/x"), allowed);
    CHECK(cdn.follow);
    CHECK(cdn.public_addresses_only);
    CHECK(decide_redirect(start, false, at("https://objects.example.net:8443/x"), allowed).follow);
    CHECK(!decide_redirect(start, false, at("https://objects.example.net/x"), allowed).follow); // another port
    CHECK(decide_redirect(start, false, at("https://[2001:db8::7]:444/x"), allowed).follow);
    CHECK(!decide_redirect(start, false, at("https://cdn.example.org.evil.net/x"), allowed).follow);
    // An origin that is itself internal (an internal mirror chain) may lead to internal hosts.
    auto inside = decide_redirect(start, true, at("https://cdn.example.org/x"), allowed);
    CHECK(inside.follow);
    CHECK(!inside.public_addresses_only);
}

TEST_CASE("a refused redirect's message masks the query values of both locations") {
    auto from = parse_location("https://data.example.org/lake/fdl.json?session=s3cr3t");
    auto to = parse_location("https://cdn.example.net/lake/fdl.json?X-Amz-Signature=deadbeef");
    REQUIRE(from.has_value());
    REQUIRE(to.has_value());
    auto refused = decide_redirect(*from, false, *to, {});
    CHECK_FALSE(refused.follow);
    CHECK(refused.why.find("s3cr3t") == std::string::npos);
    CHECK(refused.why.find("deadbeef") == std::string::npos);
    CHECK(refused.why.find("https://cdn.example.net/lake/fdl.json?X-Amz-Signature=***") != std::string::npos);
}
