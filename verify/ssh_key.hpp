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

    bool operator==(ssh_public_key const& other) const { return blob == other.blob; }
};

/// Parses and checks a key blob: ed25519 (32-byte key), ecdsa-sha2-nistp256/384/521
/// (matching curve name, uncompressed point of the curve's size), ssh-rsa (positive
/// exponent and modulus, 1024 to 16384 bits as OpenSSH requires). Certificates fail with
/// verify_errc::certificate_unsupported, sk- and other types with unsupported_key_type,
/// small RSA keys with weak_key; anything malformed with malformed_signature.
result<ssh_public_key> parse_public_key_blob(std::string_view blob);

/// Parses "TYPE BASE64" (the key part of an allowed_signers or authorized_keys line);
/// the type must match the blob's.
result<ssh_public_key> parse_public_key_text(std::string_view type, std::string_view base64);

/// "SHA256:" and the unpadded base64 of the blob's SHA-256, as ssh-keygen -l prints.
std::string fingerprint(ssh_public_key const& key);

/// True for key type names of certificates ("…-cert-v01@openssh.com").
bool is_certificate_type(std::string_view type) noexcept;

} // namespace mirror::verify
