#include "verify/ssh_cert.hpp"

#include "verify/errors.hpp"
#include "verify/openssl_key.hpp"
#include "verify/ssh_wire.hpp"

#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include <algorithm>
#include <memory>

namespace mirror::verify {

namespace {

error malformed(std::string const& why) {
    return make_error(verify_errc::malformed_signature, "certificate: " + why);
}

std::optional<std::uint64_t> u64(wire_reader& in) {
    auto high = in.u32();
    auto low = in.u32();
    if (!high || !low)
        return std::nullopt;
    return static_cast<std::uint64_t>(*high) << 32 | *low;
}

} // namespace

result<void> verify_raw_signature(ssh_public_key const& key, std::string_view signature_blob, std::string_view data) {
    wire_reader in(signature_blob);
    auto algorithm = in.cstring();
    auto bytes = in.string();
    if (!algorithm || !bytes || !in.empty())
        return malformed("signature blob is truncated or has trailing bytes");
    EVP_MD const* md = nullptr;
    std::string signature(*bytes);
    if (key.type == "ssh-ed25519" && *algorithm == "ssh-ed25519" && bytes->size() == 64) {
        md = nullptr;
    } else if (key.type == "ssh-rsa" && (*algorithm == "rsa-sha2-256" || *algorithm == "rsa-sha2-512")) {
        md = *algorithm == "rsa-sha2-256" ? EVP_sha256() : EVP_sha512();
        // OpenSSH left-pads a signature shorter than the modulus; OpenSSL wants it whole.
        auto const modulus_bytes = (key.rsa_bits + 7) / 8;
        if (signature.empty() || signature.size() > modulus_bytes)
            return malformed("RSA signature longer than the modulus");
        signature.insert(0, modulus_bytes - signature.size(), '\0');
    } else if (key.type.starts_with("ecdsa-sha2-") && *algorithm == key.type) {
        md = key.type.ends_with("256") ? EVP_sha256() : key.type.ends_with("384") ? EVP_sha384() : EVP_sha512();
        auto der = ecdsa_der(*bytes);
        if (!der)
            return malformed("ECDSA signature is not two integers");
        signature = std::move(*der);
    } else {
        return make_error(verify_errc::unsupported_algorithm, "certificate: signature algorithm '" +
                                                                  std::string(algorithm->substr(0, 40)) +
                                                                  "' is not accepted for a " + key.type + " key");
    }
    auto pkey = to_openssl(key);
    if (!pkey)
        return malformed("the signing key cannot be loaded");
    if (!openssl_verifies(pkey.get(), md, signature, data))
        return make_error(verify_errc::bad_signature, "certificate: the CA's signature does not verify");
    return {};
}

result<ssh_certificate> parse_certificate(std::string_view blob) {
    wire_reader in(blob);
    auto type = in.cstring();
    auto nonce = in.string();
    if (!type || !nonce)
        return malformed("truncated");
    // Each certificate type, its plain key type and how many key fields it carries
    // (PROTOCOL.certkeys; a security key's application is one more, PROTOCOL.u2f).
    struct kind {
        std::string_view cert, plain;
        int fields;
    };
    static constexpr kind kinds[] = {
        {"ssh-ed25519-cert-v01@openssh.com", "ssh-ed25519", 1},
        {"ssh-rsa-cert-v01@openssh.com", "ssh-rsa", 2},
        {"rsa-sha2-256-cert-v01@openssh.com", "ssh-rsa", 2}, // names OpenSSH reads as ssh-rsa's
        {"rsa-sha2-512-cert-v01@openssh.com", "ssh-rsa", 2},
        {"ecdsa-sha2-nistp256-cert-v01@openssh.com", "ecdsa-sha2-nistp256", 2},
        {"ecdsa-sha2-nistp384-cert-v01@openssh.com", "ecdsa-sha2-nistp384", 2},
        {"ecdsa-sha2-nistp521-cert-v01@openssh.com", "ecdsa-sha2-nistp521", 2},
        {"sk-ssh-ed25519-cert-v01@openssh.com", "sk-ssh-ed25519@openssh.com", 2},
        {"sk-ecdsa-sha2-nistp256-cert-v01@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com", 3},
    };
    kind const* known = nullptr;
    for (auto const& k : kinds)
        if (*type == k.cert)
            known = &k;
    if (known == nullptr)
        return make_error(verify_errc::unsupported_key_type,
                          "certificate: type '" + std::string(type->substr(0, 60)) + "' is not verified by this build");
    // The certified key's fields, rebuilt as a plain key blob.
    std::string plain = wire_string(known->plain);
    int const fields = known->fields;
    for (int i = 0; i < fields; ++i) {
        auto field = in.string();
        if (!field)
            return malformed("truncated key");
        plain += wire_string(*field);
    }
    ssh_certificate cert;
    auto key = parse_public_key_blob(plain);
    if (!key)
        return key.error();
    cert.key = std::move(*key);
    auto serial = u64(in);
    auto cert_type = in.u32();
    auto key_id = in.cstring();
    auto principals = in.string();
    auto after = u64(in);
    auto before = u64(in);
    auto critical = in.string();
    auto extensions = in.string();
    auto reserved = in.string();
    auto signed_end = blob.size();
    auto ca = in.string();
    if (!serial || !cert_type || !key_id || !principals || !after || !before || !critical || !extensions ||
        !reserved || !ca)
        return malformed("truncated");
    signed_end = static_cast<std::size_t>(ca->data() + ca->size() - blob.data());
    auto signature = in.string();
    if (!signature || !in.empty())
        return malformed("truncated signature or trailing bytes");
    cert.type = *cert_type;
    cert.key_id = std::string(*key_id);
    wire_reader names(*principals);
    while (!names.empty()) {
        auto name = names.cstring();
        if (!name)
            return malformed("principals list is malformed");
        cert.principals.emplace_back(*name);
    }
    cert.valid_after = *after;
    cert.valid_before = *before;
    wire_reader options(*critical);
    while (!options.empty()) {
        auto name = options.string();
        auto data = options.string();
        if (!name || !data)
            return malformed("critical options are malformed");
        cert.critical_options.emplace_back(*name);
    }
    auto ca_key = parse_public_key_blob(*ca);
    if (!ca_key)
        return with_context(ca_key.error(), "certificate's CA");
    cert.ca = std::move(*ca_key);
    cert.signed_part = std::string(blob.substr(0, signed_end));
    cert.signature = std::string(*signature);
    return cert;
}

bool ssh_certificate::requires_verification() const {
    return std::find(critical_options.begin(), critical_options.end(), "verify-required") != critical_options.end();
}

result<void> check_certificate_signature(ssh_certificate const& cert) {
    return verify_raw_signature(cert.ca, cert.signature, cert.signed_part);
}

result<void> check_certificate_authority(ssh_certificate const& cert, std::string_view principal, std::int64_t now) {
    if (cert.type != 1)
        return make_error(verify_errc::principal_not_allowed, "certificate: not a user certificate");
    auto when = static_cast<std::uint64_t>(now < 0 ? 0 : now);
    if (when < cert.valid_after || when >= cert.valid_before)
        return make_error(verify_errc::outside_validity, "certificate '" + cert.key_id + "': outside its validity");
    for (auto const& option : cert.critical_options)
        if (option != "verify-required")
            return make_error(verify_errc::certificate_unsupported,
                              "certificate '" + cert.key_id + "': critical option '" + option + "' is not supported");
    if (cert.principals.empty())
        return make_error(verify_errc::principal_not_allowed, "certificate '" + cert.key_id + "': names no principals");
    for (auto const& name : cert.principals)
        if (name == principal)
            return {};
    return make_error(verify_errc::principal_not_allowed,
                      "certificate '" + cert.key_id + "': does not name principal '" + std::string(principal) + "'");
}

} // namespace mirror::verify
