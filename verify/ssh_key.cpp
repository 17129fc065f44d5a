#include "verify/ssh_key.hpp"

#include "verify/errors.hpp"
#include "verify/sha256.hpp"
#include "verify/ssh_wire.hpp"

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

/// Checks an mpint that must be positive and minimally encoded; returns its bit length.
static std::optional<std::uint32_t> positive_mpint_bits(std::string_view m) {
    if (m.empty() || (static_cast<unsigned char>(m[0]) & 0x80) != 0)
        return std::nullopt; // zero or negative
    if (m[0] == 0) {
        if (m.size() == 1 || (static_cast<unsigned char>(m[1]) & 0x80) == 0)
            return std::nullopt; // a leading zero only where the sign bit needs it
        m.remove_prefix(1);
    }
    std::uint32_t bits = static_cast<std::uint32_t>(m.size()) * 8;
    for (unsigned char top = static_cast<unsigned char>(m[0]); (top & 0x80) == 0; top <<= 1)
        --bits;
    return bits;
}

result<ssh_public_key> parse_public_key_blob(std::string_view blob) {
    wire_reader in(blob);
    auto type = in.string();
    if (!type)
        return malformed("no key type");
    ssh_public_key key{std::string(*type), std::string(blob)};
    if (is_certificate_type(*type))
        return make_error(verify_errc::certificate_unsupported,
                          "public key: " + key.type + ": certificates are not verified by this build");
    if (*type == "ssh-ed25519") {
        auto pk = in.string();
        if (!pk || pk->size() != 32 || !in.empty())
            return malformed("ssh-ed25519: not a 32-byte key");
        return key;
    }
    struct curve {
        std::string_view type, name;
        std::size_t point;
    };
    static constexpr curve curves[] = {{"ecdsa-sha2-nistp256", "nistp256", 65},
                                       {"ecdsa-sha2-nistp384", "nistp384", 97},
                                       {"ecdsa-sha2-nistp521", "nistp521", 133}};
    for (auto const& c : curves) {
        if (*type != c.type)
            continue;
        auto name = in.string();
        auto point = in.string();
        if (!name || *name != c.name)
            return malformed(key.type + ": curve name does not match the key type");
        if (!point || point->size() != c.point || (*point)[0] != '\x04' || !in.empty())
            return malformed(key.type + ": not an uncompressed point of the curve");
        return key;
    }
    if (*type == "ssh-rsa") {
        auto e = in.string();
        auto n = in.string();
        if (!e || !n || !in.empty())
            return malformed("ssh-rsa: truncated or trailing bytes");
        auto e_bits = positive_mpint_bits(*e);
        auto n_bits = positive_mpint_bits(*n);
        if (!e_bits || !n_bits)
            return malformed("ssh-rsa: exponent or modulus is not a positive integer");
        if (*n_bits < rsa_min_bits)
            return make_error(verify_errc::weak_key, "public key: ssh-rsa: " + std::to_string(*n_bits) +
                                                         "-bit modulus, OpenSSH requires at least 1024");
        if (*n_bits > rsa_max_bits)
            return malformed("ssh-rsa: modulus over 16384 bits");
        key.rsa_bits = *n_bits;
        return key;
    }
    return make_error(verify_errc::unsupported_key_type,
                      "public key: type '" + key.type.substr(0, 60) + "' is not verified by this build");
}

result<ssh_public_key> parse_public_key_text(std::string_view type, std::string_view base64) {
    auto blob = base64_decode(base64);
    if (!blob)
        return malformed("not base64");
    auto key = parse_public_key_blob(*blob);
    if (!key)
        return key;
    if (key->type != type)
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
