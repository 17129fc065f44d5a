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
    std::string blob; ///< the canonical wire encoding (as OpenSSH writes the key), compared byte for byte to match keys
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
/// with weak_key; anything malformed with malformed_signature. The key's `blob` is its
/// canonical encoding, which may differ from `blob` (see canonical_key_type).
result<ssh_public_key> parse_public_key_blob(std::string_view blob);

/// The key type OpenSSH 9.2 reads a type name as (sshkey_type_from_name): "ED25519" in
/// any case is "ssh-ed25519", "RSA", "rsa-sha2-256" and "rsa-sha2-512" are "ssh-rsa", the
/// webauthn name is "sk-ecdsa-sha2-nistp256@openssh.com", and so on. Other names as given.
/// The type word of a key's text form (a line of allowed_signers) takes no short name in
/// OpenSSH 9.2 ("ED25519" there is not a key): `short_names` false reads it that way.
std::string canonical_key_type(std::string_view name, bool short_names = true);

/// Parses "TYPE BASE64" (the key part of an allowed_signers or authorized_keys line);
/// the type, an implementation name (canonical_key_type without short names), must be
/// the blob's.
result<ssh_public_key> parse_public_key_text(std::string_view type, std::string_view base64);

/// "SHA256:" and the unpadded base64 of the blob's SHA-256, as ssh-keygen -l prints.
std::string fingerprint(ssh_public_key const& key);

/// True for key type names of certificates ("…-cert-v01@openssh.com").
bool is_certificate_type(std::string_view type) noexcept;

} // namespace mirror::verify
