#include "verify/ssh_key.hpp"
#include <doctest/doctest.h>

#include "tests/support/results.hpp"
#include "tests/support/temp_dir.hpp"
#include "verify/errors.hpp"
#include "verify/ssh_wire.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace mirror;
using namespace mirror::verify;

// Keys come from the real ssh-keygen where a real one exists; the weak ones are built
// byte by byte, since no key generator makes them. The rules are OpenSSH 9.2's (sshkey.c)
// and, where this verifier is knowingly stricter, docs/mirroring-rules.md.

namespace {

std::string u32(std::uint32_t v) {
    return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}
std::string str(std::string_view s) { return u32(static_cast<std::uint32_t>(s.size())) + std::string(s); }
std::string hex(std::string_view h) {
    std::string out;
    for (std::size_t i = 0; i + 1 < h.size(); i += 2)
        out += static_cast<char>(std::stoi(std::string(h.substr(i, 2)), nullptr, 16));
    return out;
}

/// The wire blob of a key ssh-keygen makes ("-t ed25519", "-t ecdsa -b 256", …).
std::string keygen_blob(std::string const& args) {
    test::temp_dir dir;
    std::string key = (dir / "k").string();
    REQUIRE(std::system(("ssh-keygen " + args + " -N '' -q -f '" + key + "' </dev/null").c_str()) == 0);
    std::ifstream in(key + ".pub");
    std::string type, base64;
    in >> type >> base64;
    auto blob = base64_decode(base64);
    REQUIRE(blob.has_value());
    return *blob;
}

std::string ed25519_blob(std::string const& pk) { return str("ssh-ed25519") + str(pk); }

} // namespace

TEST_CASE("keys ssh-keygen makes are accepted") {
    for (auto const* args : {"-t ed25519", "-t ecdsa -b 256", "-t ecdsa -b 384", "-t ecdsa -b 521", "-t rsa -b 2048"}) {
        CAPTURE(args);
        auto key = parse_public_key_blob(keygen_blob(args));
        REQUIRE_MESSAGE(key.has_value(), (key ? "" : key.error().message));
    }
}

TEST_CASE("Ed25519 keys of small order or with an unreduced y are refused: signatures for them can be forged") {
    // The y of each small-order point, with and without the x sign bit, and y >= p.
    for (std::string y : {"0000000000000000000000000000000000000000000000000000000000000000",
                          "0100000000000000000000000000000000000000000000000000000000000000",
                          "0100000000000000000000000000000000000000000000000000000000000080",
                          "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
                          "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
                          "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
                          "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
                          "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
                          "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
                          "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
                          "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"}) {
        CAPTURE(y);
        auto key = parse_public_key_blob(ed25519_blob(hex(y)));
        REQUIRE(!key);
        CHECK(key.error().code == verify_errc::weak_key);
        CHECK(key.error().message.find("small order") != std::string::npos);
    }
    // Neighbours of those are ordinary keys.
    CHECK(parse_public_key_blob(ed25519_blob(hex("0200000000000000000000000000000000000000000000000000000000000000"))).has_value());
    CHECK(parse_public_key_blob(ed25519_blob(hex("ebffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"))).has_value());
}

TEST_CASE("ECDSA keys must be points of the curve as OpenSSH validates them") {
    auto real = keygen_blob("-t ecdsa -b 256");
    REQUIRE(parse_public_key_blob(real).has_value());
    std::string const head = str("ecdsa-sha2-nistp256") + str("nistp256");
    auto point_of = [&](std::string const& p) { return head + str(p); };
    std::string const good_point = real.substr(head.size() + 4);
    REQUIRE(good_point.size() == 65);
    // Off the curve: one bit of y flipped.
    std::string off = good_point;
    off[64] = static_cast<char>(off[64] ^ 1);
    for (auto const& [what, point] : {std::pair{"off the curve", off},
                                      std::pair{"all zeros", std::string("\x04") + std::string(64, '\0')},
                                      std::pair{"x = p", "\x04" + hex("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff") +
                                                             std::string(32, '\x01')}}) {
        CAPTURE(what);
        auto key = parse_public_key_blob(point_of(point));
        REQUIRE(!key);
        CHECK(key.error().code == verify_errc::malformed_signature);
    }
    // The generator G of P-256 is on the curve and of full order, and its x, y are fine.
    auto g = parse_public_key_blob(point_of(
        "\x04" + hex("6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296") +
        hex("4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5")));
    CHECK(g.has_value());
}

TEST_CASE("RSA keys whose exponent is 1 or even are refused: signatures for them can be forged") {
    auto real = keygen_blob("-t rsa -b 2048");
    wire_reader in(real);
    auto type = in.string();
    auto e = in.string();
    auto n = in.string();
    REQUIRE((type && e && n));
    auto with_e = [&](std::string const& exponent) { return str("ssh-rsa") + str(exponent) + str(*n); };
    CHECK(parse_public_key_blob(with_e(std::string(*e))).has_value());
    CHECK(parse_public_key_blob(with_e("\x03")).has_value());
    for (std::string weak : {std::string("\x01"), std::string("\x02"), std::string("\x01\x00\x00", 3)}) {
        auto key = parse_public_key_blob(with_e(weak));
        REQUIRE(!key);
        CHECK(key.error().code == verify_errc::weak_key);
        CHECK(key.error().message.find("exponent") != std::string::npos);
    }
}
