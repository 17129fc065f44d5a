#include "verify/sshsig.hpp"

#include "verify/errors.hpp"
#include "verify/openssl_key.hpp"
#include "verify/security_key.hpp"
#include "verify/ssh_wire.hpp"

#include <libssh/libssh.h>
#include <openssl/evp.h>

namespace mirror::verify {

static constexpr std::string_view begin_line = "-----BEGIN SSH SIGNATURE-----\n";
static constexpr std::string_view end_line = "\n-----END SSH SIGNATURE-----";
static constexpr std::string_view magic = "SSHSIG";

result<std::string> dearmor(std::string_view armored) {
    if (armored.size() > max_signature_bytes)
        return make_error(verify_errc::too_large, "signature: larger than " +
                                                      std::to_string(max_signature_bytes) + " bytes");
    if (!armored.starts_with(begin_line))
        return make_error(verify_errc::malformed_armor, "signature: does not start with '-----BEGIN SSH SIGNATURE-----'");
    armored.remove_prefix(begin_line.size());
    auto end = armored.find(end_line);
    if (end == std::string_view::npos)
        return make_error(verify_errc::malformed_armor, "signature: no '-----END SSH SIGNATURE-----' line");
    auto blob = base64_decode(armored.substr(0, end));
    if (!blob)
        return make_error(verify_errc::malformed_armor, "signature: the armored body is not base64");
    return std::move(*blob);
}

static error malformed(std::string const& why) {
    return make_error(verify_errc::malformed_signature, "signature: " + why);
}

namespace {
/// A signature blob checked against its key, in the form OpenSSH reads it as.
struct checked_signature {
    std::string algorithm;
    std::string canonical_blob; ///< the algorithm without a trailing NUL, an RSA signature padded
};
} // namespace

/// Checks the signature blob against the key: its algorithm, its sizes and integers as
/// OpenSSH 9.2 reads them, and no trailing bytes.
static result<checked_signature> check_signature_blob(ssh_public_key const& key, std::string_view signature) {
    if (key.is_security_key()) { // its own layout: flags and counter follow the signature
        auto parsed = parse_security_key_signature(key, signature);
        if (!parsed)
            return parsed.error();
        std::string const counter{static_cast<char>(parsed->counter >> 24), static_cast<char>(parsed->counter >> 16),
                                  static_cast<char>(parsed->counter >> 8), static_cast<char>(parsed->counter)};
        return checked_signature{key.type, wire_string(key.type) + wire_string(parsed->signature) +
                                               static_cast<char>(parsed->flags) + counter};
    }
    wire_reader in(signature);
    auto algorithm = in.cstring();
    auto bytes = in.string();
    if (!algorithm || !bytes || !in.empty())
        return malformed("signature blob is truncated or has trailing bytes");
    std::string name(*algorithm);
    if (key.type == "ssh-rsa") {
        if (name != "rsa-sha2-256" && name != "rsa-sha2-512")
            return make_error(verify_errc::unsupported_algorithm,
                              "signature: RSA signature algorithm '" + name.substr(0, 40) +
                                  "' is not allowed (rsa-sha2-256 or rsa-sha2-512 only)");
        auto const modulus_bytes = (key.rsa_bits + 7) / 8;
        if (bytes->empty() || bytes->size() > modulus_bytes)
            return malformed("RSA signature longer than the modulus");
        // OpenSSH left-pads a shorter one with zeros, as the integer it is.
        std::string padded(modulus_bytes - bytes->size(), '\0');
        padded += *bytes;
        return checked_signature{name, wire_string(name) + wire_string(padded)};
    }
    if (name != key.type)
        return make_error(verify_errc::unsupported_algorithm,
                          "signature: algorithm '" + name.substr(0, 40) + "' does not match the " + key.type + " key");
    if (key.type == "ssh-ed25519" && bytes->size() != 64)
        return malformed("ssh-ed25519 signature is not 64 bytes");
    if (key.type.starts_with("ecdsa-"))
        if (auto problem = ecdsa_integers_problem(*bytes))
            return malformed("ECDSA signature: " + *problem);
    return checked_signature{name, wire_string(name) + wire_string(*bytes)};
}

/// The SSHSIG public key field: a key, or a certificate and its certified key (the CA's
/// signature is not checked here).
static result<sshsig_signer> read_signer(std::string_view key_blob) {
    wire_reader peek(key_blob);
    auto key_type = peek.cstring();
    if (key_type && is_certificate_type(*key_type)) {
        auto cert = parse_certificate(key_blob);
        if (!cert)
            return with_context(cert.error(), "signature");
        ssh_public_key key = cert->key;
        return sshsig_signer{std::move(key), std::move(*cert)};
    }
    auto key = parse_public_key_blob(key_blob);
    if (!key)
        return with_context(key.error(), "signature");
    return sshsig_signer{std::move(*key), std::nullopt};
}

result<sshsig> parse_sshsig(std::string_view blob) {
    if (!blob.starts_with(magic))
        return malformed("no SSHSIG preamble");
    wire_reader in(blob.substr(magic.size()));
    auto version = in.u32();
    if (!version)
        return malformed("truncated");
    // OpenSSH 9.2 accepts any version up to its own, 1: version 0 has the same layout.
    if (*version > 1)
        return make_error(verify_errc::unsupported_version,
                          "signature: SSHSIG version " + std::to_string(*version) + ", only 0 and 1 are supported");
    // The namespace and hash algorithm are cstrings to OpenSSH: one trailing NUL is dropped.
    auto key_blob = in.string();
    auto ns = in.cstring();
    auto reserved = in.string();
    auto hash = in.cstring();
    auto signature = in.string();
    if (!key_blob || !ns || !reserved || !hash || !signature)
        return malformed("truncated, or a NUL inside the namespace or hash algorithm");
    if (!in.empty())
        return malformed("bytes after the signature");
    if (*hash != "sha256" && *hash != "sha512")
        return make_error(verify_errc::unsupported_hash,
                          "signature: hash algorithm '" + std::string(hash->substr(0, 40)) + "' (sha256 or sha512 only)");
    auto signer = read_signer(*key_blob);
    if (!signer)
        return signer.error();
    auto checked = check_signature_blob(signer->key, *signature);
    if (!checked)
        return checked.error();
    sshsig out{std::move(signer->key), std::move(signer->certificate), std::string(*ns), std::string(*hash),
               checked->algorithm,     std::string(blob),      std::move(checked->canonical_blob), std::nullopt};
    if (out.key.is_security_key()) {
        auto parsed = parse_security_key_signature(out.key, *signature);
        out.security_key = sshsig::security_key_use{parsed->flags, parsed->counter};
    }
    return out;
}

result<sshsig_signer> parse_sshsig_signer(std::string_view blob) {
    if (!blob.starts_with(magic))
        return malformed("no SSHSIG preamble");
    wire_reader in(blob.substr(magic.size()));
    auto version = in.u32();
    auto key_blob = in.string();
    if (!version || !key_blob)
        return malformed("truncated");
    if (*version > 1)
        return make_error(verify_errc::unsupported_version,
                          "signature: SSHSIG version " + std::to_string(*version) + ", only 0 and 1 are supported");
    auto signer = read_signer(*key_blob);
    if (signer && signer->certificate)
        if (auto ca = check_certificate_signature(*signer->certificate); !ca)
            return ca.error();
    return signer;
}

std::string libssh_version() {
    char const* text = ssh_version(0);
    return text == nullptr ? "unknown" : text;
}

/// The data an SSHSIG signature covers (PROTOCOL.sshsig): the preamble, the namespace, an
/// empty reserved field, the hash algorithm and the message's hash by it.
static std::string signed_data(sshsig const& signature, std::string_view message) {
    EVP_MD const* md = signature.hash_algorithm == "sha256" ? EVP_sha256() : EVP_sha512();
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned length = 0;
    if (EVP_Digest(message.data(), message.size(), digest, &length, md, nullptr) != 1)
        return {};
    return std::string(magic) + wire_string(signature.ns) + wire_string("") + wire_string(signature.hash_algorithm) +
           wire_string(std::string_view(reinterpret_cast<char const*>(digest), length));
}

/// A security key's signature over `message`, checked with OpenSSL.
static result<void> verify_security_key(sshsig const& signature, std::string_view message) {
    auto parsed = parse_security_key_signature(signature.key, signature.signature_blob);
    if (!parsed)
        return parsed.error();
    std::string data = signed_data(signature, message);
    if (data.empty())
        return make_error(verify_errc::bad_signature, "signature: the message cannot be hashed");
    return verify_security_key_signature(signature.key, *parsed, data);
}

namespace {
/// Owns a key libssh returns.
struct ssh_key_holder {
    ssh_key key = nullptr;
    ~ssh_key_holder() { ssh_key_free(key); }
};
} // namespace

result<sshsig> verify_sshsig(std::string_view armored, std::string_view message, std::string_view ns) {
    auto blob = dearmor(armored);
    if (!blob)
        return blob.error();
    auto parsed = parse_sshsig(*blob);
    if (!parsed)
        return parsed.error();
    if (parsed->ns != ns)
        return make_error(verify_errc::namespace_mismatch, "signature: made for namespace '" +
                                                               parsed->ns.substr(0, 60) + "', expected '" +
                                                               std::string(ns) + "'");
    if (parsed->certificate)
        if (auto ca = check_certificate_signature(*parsed->certificate); !ca)
            return ca.error();
    if (parsed->key.is_security_key()) {
        if (auto checked = verify_security_key(*parsed, message); !checked)
            return checked.error();
        return std::move(*parsed);
    }
    // libssh gets the blob as OpenSSH reads it, rebuilt from what was checked, never the
    // input: version 1 (the version is not signed), the key's canonical encoding (for a
    // certificate, the certified key itself: the signature does not cover the key field,
    // and the certificate was checked above), the namespace and hash algorithm without a
    // trailing NUL, an empty reserved field (never signed), and the canonical signature.
    std::string const checked = std::string(magic) + std::string{0, 0, 0, 1} + wire_string(parsed->key.blob) +
                                wire_string(parsed->ns) + wire_string("") + wire_string(parsed->hash_algorithm) +
                                wire_string(parsed->signature_blob);
    std::string canonical = std::string(begin_line);
    std::string body = base64_encode(checked);
    for (std::size_t i = 0; i < body.size(); i += 70)
        canonical += body.substr(i, 70) + "\n";
    canonical += std::string(end_line.substr(1)) + "\n";
    std::string namespace_text(ns);
    ssh_key_holder signer;
    int rc = sshsig_verify(message.data(), message.size(), canonical.c_str(), namespace_text.c_str(), &signer.key);
    if (rc != SSH_OK || signer.key == nullptr)
        return make_error(verify_errc::bad_signature, "signature: does not verify over the message with its key");
    return std::move(*parsed);
}

} // namespace mirror::verify
