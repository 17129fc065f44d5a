#pragma once
// The publish gate's signature rule for one origin (spec README, "Signatures"): which
// keys are trusted, in which namespace, and whether a signature is required.

#include "verify/allowed_signers.hpp"
#include "verify/error.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mirror::verify {

enum class signature_policy {
    required,   ///< a version without a valid signature by a trusted key is held
    if_present, ///< an invalid or untrusted signature holds; a missing one does not
    off,        ///< signatures are copied, not checked
};

/// How one origin's versions are checked. The keys come from configuration, out of band.
struct trust_settings {
    signature_policy policy = signature_policy::off;
    allowed_signers signers;
    std::string ns = "fdl";
};

/// Who signed a version, as the report and the audit show it.
struct signer_info {
    std::string principals;  ///< the accepting line's principals field
    std::string fingerprint; ///< "SHA256:…"
    std::string key_type;
    std::size_t line = 0;    ///< of the allowed_signers file
    std::string ca_fingerprint; ///< for a certificate, its CA's key (the key the file trusts)

    /// The trusted key this signature rests on: the CA's for a certificate.
    std::string const& trusted_key() const { return ca_fingerprint.empty() ? fingerprint : ca_fingerprint; }
};

/// The certificate's principals that `line` accepts at `now`, in the certificate's order.
std::vector<std::string> certificate_principals(allowed_signer const& line, ssh_certificate const& cert,
                                                std::int64_t now);

/// Applies the policy to a version: `record` is the exact bytes of its version.json,
/// `armored` its version.json.sig (nullopt when there is none) and `now` the time keys'
/// windows are checked at. Returns the signer when a trusted signature verified, nullopt
/// when the policy lets the version through without one, and otherwise the reason it is
/// held: verify_errc::missing_signature, or why the signature failed or is not trusted.
result<std::optional<signer_info>> check_version_signature(trust_settings const& trust, std::string_view record,
                                                           std::optional<std::string_view> armored,
                                                           std::int64_t now);

/// The keys an origin's fdl.json `signers` announces, compared with the trusted ones:
/// neither list is trusted because of the other (the announced list never is).
struct key_differences {
    std::vector<std::string> announced_not_trusted; ///< fingerprints (and principals) to report
    std::vector<std::string> trusted_not_announced;
    std::vector<std::string> unreadable;            ///< announced lines that do not parse
};

key_differences compare_announced_keys(std::vector<std::string> const& announced, allowed_signers const& trusted);

} // namespace mirror::verify
