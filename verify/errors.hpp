#pragma once
// Why a signature is not trusted. A verifier starts from "failed"; each code names the
// first check that did not pass, and there is one success exit (docs/development.md).

#include <boost/system/error_code.hpp>
#include <type_traits>

namespace mirror::verify {

enum class verify_errc {
    malformed_armor = 1,     ///< not "-----BEGIN SSH SIGNATURE-----" … base64 … END
    malformed_signature,     ///< the SSHSIG blob does not parse, or has trailing bytes
    unsupported_version,     ///< SSHSIG version other than 1
    unsupported_hash,        ///< hash algorithm other than sha256 or sha512
    unsupported_key_type,    ///< a key type this verifier does not accept
    weak_key,                ///< an RSA modulus under 1024 bits, as OpenSSH refuses
    unsupported_algorithm,   ///< a signature algorithm the key type does not allow (ssh-rsa/SHA-1)
    certificate_unsupported, ///< a certificate this build does not accept (a critical option)
    namespace_mismatch,      ///< signed for another namespace
    bad_signature,           ///< the cryptographic check failed: tampered message or signature
    untrusted_key,           ///< no allowed_signers line holds the key
    principal_not_allowed,   ///< a line holds the key, but not for that principal
    namespace_not_allowed,   ///< the line's namespaces= excludes the namespace
    outside_validity,        ///< before valid-after or after valid-before
    malformed_allowed_signers, ///< a line of the allowed_signers file does not parse
    too_large,               ///< a signature past the size this verifier accepts
    missing_signature,       ///< the policy requires a signature and there is none
    security_key_flags,      ///< a security key signed without the user presence or verification its line requires
    unusable_signing_key,    ///< the mirror's own private key cannot sign (unreadable, encrypted, exposed, a security key)
};

boost::system::error_category const& verify_category() noexcept;

inline boost::system::error_code make_error_code(verify_errc e) noexcept {
    return {static_cast<int>(e), verify_category()};
}

/// A stable short name for reports and metrics ("untrusted_key").
char const* kind_name(verify_errc e) noexcept;

} // namespace mirror::verify

template <>
struct boost::system::is_error_code_enum<mirror::verify::verify_errc> : std::true_type {};
