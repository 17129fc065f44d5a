#pragma once
// SSH public keys: parsing the wire blob and the one-line text form, with the checks
// OpenSSH applies before it trusts a key.

#include "verify/error.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace mirror::verify {

/// A public key this verifier accepts, as its wire blob.
struct ssh_public_key {
    std::string type; ///< "ssh-ed25519", "ecdsa-sha2-nistp256", "ssh-rsa", …
    std::string blob; ///< the wire encoding, compared byte for byte to match keys
    std::uint32_t rsa_bits = 0;
    /// Security keys (FIDO/U2F) only: the application their signatures are bound to ("ssh:").
    std::string application;

    bool operator==(ssh_public_key const& other) const { return blob == other.blob; }
    /// sk-ssh-ed25519@openssh.com or sk-ecdsa-sha2-nistp256@openssh.com.
    bool is_security_key() const noexcept { return type.starts_with("sk-"); }
};

/// Parses and checks a key blob: ed25519 (32-byte key), ecdsa-sha2-nistp256/384/521
/// (matching curve name, uncompressed point of the curve, validated as OpenSSH does),
/// ssh-rsa (positive exponent and modulus, 1024 to 16384 bits as OpenSSH requires), and
/// the security-key kinds sk-ssh-ed25519@openssh.com and sk-ecdsa-sha2-nistp256@openssh.com
/// (the same key fields, then the application, PROTOCOL.u2f). Certificates fail with
/// verify_errc::certificate_unsupported, other types with unsupported_key_type, weak keys
/// with weak_key; anything malformed with malformed_signature.
result<ssh_public_key> parse_public_key_blob(std::string_view blob);

/// Parses "TYPE BASE64" (the key part of an allowed_signers or authorized_keys line);
/// the type must match the blob's.
result<ssh_public_key> parse_public_key_text(std::string_view type, std::string_view base64);

/// "SHA256:" and the unpadded base64 of the blob's SHA-256, as ssh-keygen -l prints.
std::string fingerprint(ssh_public_key const& key);

/// True for key type names of certificates ("…-cert-v01@openssh.com").
bool is_certificate_type(std::string_view type) noexcept;

} // namespace mirror::verify
