#pragma once
// SSHSIG signatures (OpenSSH's PROTOCOL.sshsig), as `ssh-keygen -Y sign` writes them.
// Parsing and every rule OpenSSH enforces around the cryptography are ours; the
// cryptographic check itself is libssh's sshsig_verify (libssh >= 0.12).

#include "verify/error.hpp"
#include "verify/ssh_cert.hpp"
#include "verify/ssh_key.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace mirror::verify {

/// The most armored signature text accepted (an RSA-16384 signature is under 5 KiB).
inline constexpr std::size_t max_signature_bytes = 64 * 1024;

/// A parsed SSHSIG blob.
struct sshsig {
    ssh_public_key key;         ///< the key that signed (for a certificate, the certified key)
    std::optional<ssh_certificate> certificate; ///< when the signer presented a certificate
    std::string ns;             ///< the namespace it was made for
    std::string hash_algorithm; ///< "sha256" or "sha512"
    std::string signature_algorithm; ///< "ssh-ed25519", "rsa-sha2-512", …
    std::string blob;           ///< the whole SSHSIG blob, dearmored
    std::string signature_blob; ///< the signature field as OpenSSH reads it (see check_signature_blob)
    /// A security key's signature: the flags its authenticator set and its counter (the
    /// allowed_signers line decides which flags it must have).
    struct security_key_use {
        std::uint8_t flags = 0;
        std::uint32_t counter = 0;
    };
    std::optional<security_key_use> security_key;
};

/// Removes the armor as OpenSSH does: the text must start with
/// "-----BEGIN SSH SIGNATURE-----\n"; the base64 up to "\n-----END SSH SIGNATURE-----" is
/// decoded skipping whitespace; what follows the end line is ignored.
/// Fails with verify_errc::malformed_armor or too_large.
result<std::string> dearmor(std::string_view armored);

/// Parses a dearmored blob: "SSHSIG", version 1, public key, namespace, reserved, hash
/// algorithm (sha256 or sha512), signature; nothing after. Checks the key (see
/// parse_public_key_blob) and that the signature algorithm suits it: the key's own type
/// for ed25519 and ECDSA, rsa-sha2-256 or rsa-sha2-512 for RSA (never SHA-1), with no
/// bytes after the signature.
result<sshsig> parse_sshsig(std::string_view blob);

/// The signer a dearmored blob names, read as `ssh-keygen -Y find-principals` reads it:
/// the preamble, a version up to 1 and the public key (for a certificate, its CA's
/// signature checked). Nothing after the key is looked at: the signature is not verified.
struct sshsig_signer {
    ssh_public_key key; ///< for a certificate, the certified key
    std::optional<ssh_certificate> certificate;
};
result<sshsig_signer> parse_sshsig_signer(std::string_view blob);

/// The version of the libssh this build runs with (for --version and build_info).
std::string libssh_version();

/// Verifies `armored` over `message` for namespace `ns`: dearmor, parse_sshsig, the
/// namespace, then the cryptographic check (libssh's sshsig_verify; for a security key,
/// verify_security_key_signature), and for a certificate its CA's signature. Returns the
/// parsed signature only when every step passed; says nothing of trust, nor of a security
/// key's flags (see allowed_signers).
result<sshsig> verify_sshsig(std::string_view armored, std::string_view message, std::string_view ns);

} // namespace mirror::verify
