#pragma once
// Signatures by security keys (FIDO/U2F; PROTOCOL.u2f, PROTOCOL.sshsig): an Ed25519 or
// ECDSA P-256 key held by an authenticator, which signs a digest of the application, the
// flags it set (was the user present, verified) and its counter, with the message's.
// Verified here with OpenSSL: libssh is not asked.

#include "verify/error.hpp"
#include "verify/ssh_key.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace mirror::verify {

/// Flag bits an authenticator sets (PROTOCOL.u2f).
inline constexpr std::uint8_t user_present = 0x01;
inline constexpr std::uint8_t user_verified = 0x04;

/// A security key's signature blob, parsed.
struct security_key_signature {
    std::string signature; ///< 64 Ed25519 bytes, or SSH's (mpint r, mpint s)
    std::uint8_t flags = 0;
    std::uint32_t counter = 0;
};

/// Parses `blob` (string type, string signature, byte flags, uint32 counter, nothing
/// after) for `key`, a security key: the type must be the key's own (for a certificate,
/// its plain key's), an Ed25519 signature 64 bytes, an ECDSA one two integers OpenSSH
/// reads (ecdsa_integers_problem). webauthn-sk-ecdsa-sha2-nistp256@openssh.com signatures
/// fail with unsupported_algorithm (docs/mirroring-rules.md); the rest with
/// malformed_signature.
result<security_key_signature> parse_security_key_signature(ssh_public_key const& key, std::string_view blob);

/// Checks `signature` by `key` over `signed_data` (the SSHSIG data signed): the key signed
/// SHA256(application) || flags || counter || SHA256(signed_data), Ed25519 over it, or
/// ECDSA P-256 with SHA-256. Says nothing of the flags: allowed_signers decides what they
/// must be. Fails with bad_signature; the only success exit is at the end.
result<void> verify_security_key_signature(ssh_public_key const& key, security_key_signature const& signature,
                                           std::string_view signed_data);

} // namespace mirror::verify
