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

TEST_CASE("a key is read as OpenSSH reads it and kept canonical: type aliases, a trailing NUL, leading zeros") {
    auto const ed = keygen_blob("-t ed25519");
    auto const rsa = keygen_blob("-t rsa -b 2048");
    auto canonical_ed = parse_public_key_blob(ed);
    auto canonical_rsa = parse_public_key_blob(rsa);
    REQUIRE((canonical_ed && canonical_rsa));
    CHECK(canonical_ed->blob == ed); // ssh-keygen writes keys canonically
    CHECK(canonical_rsa->blob == rsa);
    wire_reader ed_in(ed);
    ed_in.string();
    std::string const ed_pk(*ed_in.string());
    for (std::string type : {std::string("ED25519"), std::string("eD25519"), std::string("ssh-ed25519\0", 12)}) {
        CAPTURE(type);
        auto key = parse_public_key_blob(str(type) + str(ed_pk));
        REQUIRE_MESSAGE(key.has_value(), (key ? "" : key.error().message));
        CHECK(key->type == "ssh-ed25519");
        CHECK(key->blob == ed);
        CHECK(*key == *canonical_ed);
        CHECK(fingerprint(*key) == fingerprint(*canonical_ed));
    }
    wire_reader rsa_in(rsa);
    rsa_in.string();
    std::string const e(*rsa_in.string()), n(*rsa_in.string());
    for (std::string type : {"RSA", "rsa", "rsa-sha2-256", "rsa-sha2-512"}) {
        CAPTURE(type);
        auto key = parse_public_key_blob(str(type) + str(e) + str(n));
        REQUIRE(key.has_value());
        CHECK(key->blob == rsa);
    }
    auto zeros = parse_public_key_blob(str("ssh-rsa") + str(std::string(3, '\0') + e) + str(std::string(1, '\0') + n));
    REQUIRE(zeros.has_value());
    CHECK(zeros->blob == rsa);
    CHECK(zeros->rsa_bits == 2048);
    // What OpenSSH refuses: two NULs, a NUL inside, ECDSA's short names, a negative modulus.
    CHECK_FALSE(parse_public_key_blob(str(std::string("ssh-ed25519\0\0", 13)) + str(ed_pk)).has_value());
    CHECK_FALSE(parse_public_key_blob(str(std::string("ssh-ed\0" "25519", 12)) + str(ed_pk)).has_value());
    auto ecdsa = keygen_blob("-t ecdsa -b 256");
    wire_reader ec_in(ecdsa);
    ec_in.string();
    std::string const curve(*ec_in.string()), point(*ec_in.string());
    CHECK_FALSE(parse_public_key_blob(str("ECDSA") + str(curve) + str(point)).has_value());
    auto ec_nul = parse_public_key_blob(str("ecdsa-sha2-nistp256") + str(curve + '\0') + str(point));
    REQUIRE(ec_nul.has_value());
    CHECK(ec_nul->blob == ecdsa);
    CHECK_FALSE(parse_public_key_blob(str("ssh-rsa") + str(e) + str("\x80" + n)).has_value());
    // The text form's type word takes implementation names only, as OpenSSH's sshkey_read.
    CHECK_FALSE(parse_public_key_text("ED25519", base64_encode(ed)).has_value());
    CHECK_FALSE(parse_public_key_text("ssh-rsa", base64_encode(ed)).has_value());
    auto text = parse_public_key_text("rsa-sha2-512", base64_encode(rsa));
    REQUIRE(text.has_value());
    CHECK(text->blob == rsa);
    auto aliased_blob = parse_public_key_text("ssh-ed25519", base64_encode(str("ED25519") + str(ed_pk)));
    REQUIRE(aliased_blob.has_value());
    CHECK(aliased_blob->blob == ed);
}
