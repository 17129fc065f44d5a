#pragma once
// OpenSSH certificates (PROTOCOL.certkeys) for allowed_signers' cert-authority lines:
// parsing, and the CA's signature checked with OpenSSL.

#include "verify/error.hpp"
#include "verify/ssh_key.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mirror::verify {

struct ssh_certificate {
    ssh_public_key key;       ///< the certified key, as a plain key blob
    std::uint32_t type = 0;   ///< 1 user, 2 host
    std::string key_id;
    std::vector<std::string> principals;
    std::uint64_t valid_after = 0;
    std::uint64_t valid_before = 0;
    std::vector<std::string> critical_options; ///< names; only verify-required is supported
    /// The critical option verify-required: a security key must have verified its user.
    bool requires_verification() const;
    ssh_public_key ca;        ///< the signature key
    std::string signed_part;  ///< the bytes the CA signed
    std::string signature;    ///< the CA's signature blob
};

/// Parses a certificate blob of an ed25519, ecdsa-sha2-nistp* or rsa certificate type and
/// checks its certified key and its CA key as parse_public_key_blob does.
result<ssh_certificate> parse_certificate(std::string_view blob);

/// Checks the CA's signature over the certificate (ed25519, ECDSA with the curve's hash,
/// RSA with rsa-sha2-256/512; never SHA-1). The only success exit is at the end.
result<void> check_certificate_signature(ssh_certificate const& cert);

/// What OpenSSH checks before a user certificate may sign for `principal` at `now`: a
/// user certificate, within its validity, naming the principal; and, stricter than
/// OpenSSH, no critical option other than verify-required (which allowed_signers enforces
/// on a security key's flags).
result<void> check_certificate_authority(ssh_certificate const& cert, std::string_view principal, std::int64_t now);

/// Verifies a raw SSH signature blob (string algorithm, string signature) by `key` over
/// `data`, with OpenSSL.
result<void> verify_raw_signature(ssh_public_key const& key, std::string_view signature_blob, std::string_view data);

} // namespace mirror::verify
