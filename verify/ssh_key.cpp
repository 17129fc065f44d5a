#include "verify/ssh_key.hpp"

#include "verify/errors.hpp"
#include "verify/sha256.hpp"
#include "verify/ssh_wire.hpp"

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/obj_mac.h>

#include <algorithm>
#include <cctype>
#include <memory>

namespace mirror::verify {

// OpenSSH's limits on RSA moduli (SSH_RSA_MINIMUM_MODULUS_SIZE, SSHBUF_MAX_BIGNUM).
static constexpr std::uint32_t rsa_min_bits = 1024;
static constexpr std::uint32_t rsa_max_bits = 16384;

bool is_certificate_type(std::string_view type) noexcept {
    return type.ends_with("-cert-v01@openssh.com");
}

static error malformed(std::string const& why) {
    return make_error(verify_errc::malformed_signature, "public key: " + why);
}

/// Whether a 32-byte Ed25519 public key is one no signature should be trusted from: a
/// point of small order (with the identity, y = 1, anyone can make a signature that
/// verifies for any message), or a y that is not below the field's prime. The y values of
/// the eight small-order points (their x sign bit cleared): 0, 1, p - 1 and the two of
/// order 8. OpenSSH 9.2 accepts these keys; this verifier is knowingly stricter.
static bool weak_ed25519_key(std::string_view pk) {
    static constexpr unsigned char small_order[][32] = {
        {0x00}, // y = 0, order 4
        {0x01}, // y = 1, the identity
        {0x26, 0xe8, 0x95, 0x8f, 0xc2, 0xb2, 0x27, 0xb0, 0x45, 0xc3, 0xf4, 0x89, 0xf2, 0xef, 0x98, 0xf0,
         0xd5, 0xdf, 0xac, 0x05, 0xd3, 0xc6, 0x33, 0x39, 0xb1, 0x38, 0x02, 0x88, 0x6d, 0x53, 0xfc, 0x05}, // order 8
        {0xc7, 0x17, 0x6a, 0x70, 0x3d, 0x4d, 0xd8, 0x4f, 0xba, 0x3c, 0x0b, 0x76, 0x0d, 0x10, 0x67, 0x0f,
         0x2a, 0x20, 0x53, 0xfa, 0x2c, 0x39, 0xcc, 0xc6, 0x4e, 0xc7, 0xfd, 0x77, 0x92, 0xac, 0x03, 0x7a}, // order 8
    };
    unsigned char y[32];
    for (std::size_t i = 0; i < 32; ++i)
        y[i] = static_cast<unsigned char>(pk[i]);
    y[31] &= 0x7f; // the x sign bit
    for (auto const& weak : small_order)
        if (std::equal(y, y + 32, weak))
            return true;
    // y >= p = 2^255 - 19 (little-endian): the top 31 bytes all 0xff but the last (0x7f)
    // and the first at least 0xed. p - 1 (0xec…) has order 2: refused with them.
    bool top_full = y[31] == 0x7f && std::all_of(y + 1, y + 31, [](unsigned char b) { return b == 0xff; });
    return top_full && y[0] >= 0xec;
}

/// Why an ECDSA public point is not one OpenSSH accepts (sshkey_ec_validate_public): not
/// on the curve, the point at infinity, an x or y of at most half the order's bits, or
/// not below the order minus one. nullopt when it is acceptable.
static std::optional<std::string> ecdsa_point_problem(int nid, std::string_view point) {
    using group_ptr = std::unique_ptr<EC_GROUP, decltype(&EC_GROUP_free)>;
    using point_ptr = std::unique_ptr<EC_POINT, decltype(&EC_POINT_free)>;
    using bn_ptr = std::unique_ptr<BIGNUM, decltype(&BN_free)>;
    group_ptr group(EC_GROUP_new_by_curve_name(nid), EC_GROUP_free);
    if (!group)
        return "the curve is not available";
    point_ptr q(EC_POINT_new(group.get()), EC_POINT_free);
    bn_ptr x(BN_new(), BN_free), y(BN_new(), BN_free), limit(BN_new(), BN_free);
    if (!q || !x || !y || !limit)
        return "out of memory";
    auto const* bytes = reinterpret_cast<unsigned char const*>(point.data());
    if (EC_POINT_oct2point(group.get(), q.get(), bytes, point.size(), nullptr) != 1)
        return "the point is not on the curve";
    if (EC_POINT_is_at_infinity(group.get(), q.get()) == 1)
        return "the point at infinity";
    if (EC_POINT_get_affine_coordinates(group.get(), q.get(), x.get(), y.get(), nullptr) != 1)
        return "the point has no coordinates";
    BIGNUM const* order = EC_GROUP_get0_order(group.get());
    int const half = BN_num_bits(order) / 2;
    if (BN_num_bits(x.get()) <= half || BN_num_bits(y.get()) <= half)
        return "a coordinate of the point is too small";
    if (BN_copy(limit.get(), order) == nullptr || BN_sub_word(limit.get(), 1) != 1)
        return "out of memory";
    if (BN_cmp(x.get(), limit.get()) >= 0 || BN_cmp(y.get(), limit.get()) >= 0)
        return "a coordinate of the point is not below the order minus one";
    // The curves have cofactor 1, so every point on them has the group's order; the
    // check that order * Q is infinity, as OpenSSH makes it, costs little and says so.
    point_ptr times_order(EC_POINT_new(group.get()), EC_POINT_free);
    if (!times_order || EC_POINT_mul(group.get(), times_order.get(), nullptr, q.get(), order, nullptr) != 1 ||
        EC_POINT_is_at_infinity(group.get(), times_order.get()) != 1)
        return "the point is not of the group's order";
    return std::nullopt;
}

/// The bit length of a magnitude without leading zeros (0 for zero).
static std::uint32_t bit_length(std::string_view magnitude) {
    if (magnitude.empty())
        return 0;
    std::uint32_t bits = static_cast<std::uint32_t>(magnitude.size()) * 8;
    for (unsigned char top = static_cast<unsigned char>(magnitude[0]); (top & 0x80) == 0; top <<= 1)
        --bits;
    return bits;
}

std::string canonical_key_type(std::string_view name, bool short_names) {
    // OpenSSH's sshkey_type_from_name: every implementation name, signature algorithm
    // names included, and for plain keys the short name in any case. ECDSA's short names
    // read no curve, so OpenSSH refuses a key under them: they are left as they are.
    auto is = [&](std::string_view shortname) {
        return short_names && name.size() == shortname.size() &&
               std::equal(name.begin(), name.end(), shortname.begin(),
                          [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
    };
    if (is("ed25519"))
        return "ssh-ed25519";
    if (is("ed25519-sk"))
        return "sk-ssh-ed25519@openssh.com";
    if (is("rsa") || name == "rsa-sha2-256" || name == "rsa-sha2-512")
        return "ssh-rsa";
    if (is("dsa"))
        return "ssh-dss";
    if (name == "webauthn-sk-ecdsa-sha2-nistp256@openssh.com")
        return "sk-ecdsa-sha2-nistp256@openssh.com";
    return std::string(name);
}

// Keys are read as OpenSSH reads them (type names through canonical_key_type, cstrings
// with one trailing NUL allowed, mpints with leading zeros), and kept in their canonical
// encoding, as OpenSSH writes them back: two encodings of one key are one key, compared
// and fingerprinted alike.
result<ssh_public_key> parse_public_key_blob(std::string_view blob) {
    wire_reader in(blob);
    auto type_field = in.cstring();
    if (!type_field)
        return malformed("no key type");
    ssh_public_key key{canonical_key_type(*type_field), {}};
    if (is_certificate_type(*type_field))
        return make_error(verify_errc::certificate_unsupported,
                          "public key: " + std::string(type_field->substr(0, 60)) +
                              ": certificates are not verified by this build");
    std::string canonical = wire_string(key.type);
    // A security key's application is a cstring to OpenSSH.
    auto application = [&]() -> std::optional<std::string> {
        auto app = in.cstring();
        if (!app)
            return std::nullopt;
        return std::string(*app);
    };
    bool const sk_ed25519 = key.type == "sk-ssh-ed25519@openssh.com";
    if (key.type == "ssh-ed25519" || sk_ed25519) {
        auto pk = in.string();
        std::optional<std::string> app;
        if (pk && sk_ed25519 && !(app = application()))
            return malformed(key.type + ": no application");
        if (!pk || pk->size() != 32 || !in.empty())
            return malformed(key.type + ": not a 32-byte key");
        key.application = app.value_or("");
        if (weak_ed25519_key(*pk))
            return make_error(verify_errc::weak_key, "public key: " + key.type + ": a point of small order or an "
                                                     "unreduced encoding, for which signatures can be forged");
        key.blob = canonical + wire_string(*pk) + (sk_ed25519 ? wire_string(key.application) : "");
        return key;
    }
    struct curve {
        std::string_view type, name;
        std::size_t point;
        int nid;
    };
    static constexpr curve curves[] = {{"ecdsa-sha2-nistp256", "nistp256", 65, NID_X9_62_prime256v1},
                                       {"ecdsa-sha2-nistp384", "nistp384", 97, NID_secp384r1},
                                       {"ecdsa-sha2-nistp521", "nistp521", 133, NID_secp521r1},
                                       {"sk-ecdsa-sha2-nistp256@openssh.com", "nistp256", 65, NID_X9_62_prime256v1}};
    for (auto const& c : curves) {
        if (key.type != c.type)
            continue;
        auto name = in.cstring();
        auto point = in.string();
        if (!name || *name != c.name)
            return malformed(key.type + ": curve name does not match the key type");
        std::optional<std::string> app;
        bool const sk = key.type.starts_with("sk-");
        if (point && sk && !(app = application()))
            return malformed(key.type + ": no application");
        if (!point || point->size() != c.point || (*point)[0] != '\x04' || !in.empty())
            return malformed(key.type + ": not an uncompressed point of the curve");
        key.application = app.value_or("");
        if (auto problem = ecdsa_point_problem(c.nid, *point))
            return malformed(key.type + ": " + *problem);
        key.blob = canonical + wire_string(c.name) + wire_string(*point) + (sk ? wire_string(key.application) : "");
        return key;
    }
    if (key.type == "ssh-rsa") {
        auto e = in.unsigned_mpint();
        auto n = in.unsigned_mpint();
        if (!e || !n || !in.empty())
            return malformed("ssh-rsa: truncated, trailing bytes, or a negative or over-long integer");
        auto const n_bits = bit_length(*n);
        if (n_bits < rsa_min_bits)
            return make_error(verify_errc::weak_key, "public key: ssh-rsa: " + std::to_string(n_bits) +
                                                         "-bit modulus, OpenSSH requires at least 1024");
        if (n_bits > rsa_max_bits)
            return malformed("ssh-rsa: modulus over 16384 bits");
        // With e = 1 a "signature" is the padded digest itself, anyone's to make; an even
        // e (zero included) has no inverse. OpenSSH 9.2 accepts them: this verifier is
        // knowingly stricter.
        bool const odd = !e->empty() && (static_cast<unsigned char>(e->back()) & 1) != 0;
        if (!odd || bit_length(*e) < 2)
            return make_error(verify_errc::weak_key, "public key: ssh-rsa: the exponent is 1 or even, for which "
                                                     "signatures can be forged");
        key.rsa_bits = n_bits;
        key.blob = canonical + wire_mpint(*e) + wire_mpint(*n);
        return key;
    }
    return make_error(verify_errc::unsupported_key_type,
                      "public key: type '" + std::string(type_field->substr(0, 60)) + "' is not verified by this build");
}

result<ssh_public_key> parse_public_key_text(std::string_view type, std::string_view base64) {
    auto blob = base64_decode(base64);
    if (!blob)
        return malformed("not base64");
    auto key = parse_public_key_blob(*blob);
    if (!key)
        return key;
    if (key->type != canonical_key_type(type, false))
        return malformed("the text says '" + std::string(type.substr(0, 60)) + "', the key is " + key->type);
    return key;
}

std::string fingerprint(ssh_public_key const& key) {
    auto digest = sha256_of(key.blob);
    std::string text = base64_encode(std::string_view(reinterpret_cast<char const*>(digest.data()), digest.size()));
    while (!text.empty() && text.back() == '=')
        text.pop_back();
    return "SHA256:" + text;
}

} // namespace mirror::verify
