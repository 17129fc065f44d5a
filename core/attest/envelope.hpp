#pragma once
// A statement signed in a DSSE envelope (github.com/secure-systems-lab/dsse): the payload
// and its type, and signatures over DSSE's pre-authentication encoding (PAE) of both. Each
// signature is an SSHSIG blob (as `ssh-keygen -Y sign` makes, over the PAE bytes, for the
// attestation namespace), base64 in `sig`, with the key's fingerprint as `keyid`; so that
// `ssh-keygen -Y verify` can check one on its own (docs/attestations.md shows how).

#include "core/attest/statement.hpp"
#include "verify/allowed_signers.hpp"
#include "verify/error.hpp"
#include "verify/signature_policy.hpp"
#include "verify/signing_key.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mirror::attest {

inline constexpr std::string_view payload_type = "application/vnd.in-toto+json";

/// "DSSEv1 LEN(type) type LEN(body) body", lengths in ASCII decimal: the bytes signed.
std::string pae(std::string_view type, std::string_view body);

struct envelope_signature {
    std::string keyid; ///< "SHA256:…" (a hint; the key is the one in the SSHSIG blob)
    std::string sig;   ///< the SSHSIG blob, dearmored
};

struct envelope {
    std::string payload_type;
    std::string payload; ///< decoded
    std::vector<envelope_signature> signatures;
};

std::string render_envelope(envelope const& e);
/// A DSSE envelope in JSON (payload and sig in standard base64); attest_errc::malformed.
result<envelope> parse_envelope(std::string_view text);

/// The SSHSIG blob in the armored form ssh-keygen reads (base64 in lines of 70).
std::string armor_sshsig(std::string_view blob);

/// `statement` rendered, in an envelope signed by `key` for namespace `ns`.
result<std::string> sign_statement(mirror_statement const& statement, verify::signing_key const& key,
                                   std::string_view ns);

/// An envelope whose signature a trusted key made, and the statement it carries.
struct opened_envelope {
    mirror_statement statement;
    verify::signer_info signer;
};

/// Opens an attestation as a consumer must: the envelope parses and carries an in-toto
/// payload, one of its signatures verifies over the PAE bytes for namespace `ns` by a key
/// `trusted` accepts for it at `now` (its valid-after and valid-before included), and
/// only then is the statement read. Fails with attest_errc::malformed, bad_signature (no
/// signature verifies) or untrusted_key (one verifies, by a key the file does not
/// accept now), naming the key.
result<opened_envelope> open_envelope(std::string_view text, verify::allowed_signers const& trusted,
                                      std::string_view ns, std::int64_t now);

} // namespace mirror::attest
