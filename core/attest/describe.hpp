#pragma once
// The daemon's side of attestations: the statement of a mirror as it stands after a pass
// (describe_mirror), and what it remembers between two of them so that each costs reads
// of what changed only.

#include "core/attest/statement.hpp"
#include "core/io/net.hpp"
#include "core/store/store.hpp"
#include "verify/signature_policy.hpp"
#include "verify/signing_key.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace mirror::attest {

/// What is remembered of a version once attested: its version.json's sha256 and its signer.
struct remembered_version {
    std::string sha256;
    std::string signer; ///< "" when no signature was accepted
};
using remembered_versions = std::map<std::string, remembered_version, std::less<>>;

struct statement_inputs {
    std::string origin; ///< locations as configured: secrets are taken out here
    std::string mirror;
    std::int64_t verified_at = 0; ///< when the pass that compared the mirror with its origin began
    std::int64_t now = 0;
    std::chrono::seconds validity{24 * 3600}; ///< expires = verified_at + validity
    verify::trust_settings const* trust = nullptr; ///< the repository's signature policy and keys
    std::string allowed_signers_sha256;           ///< of the trusted keys' file; "" when none
    std::string tool_version;
    std::string instance;
    std::optional<std::uint64_t> fencing_token;
    /// Signers the pass just ended accepted, by version: taken without a read.
    std::map<std::string, verify::signer_info> const* signers = nullptr;
    std::size_t concurrency = 4;
};

/// The statement of `mirror` as it is now: read_mirror_state with what `memory` knows,
/// and, for each version it does not know, its signer (its version.json.sig checked with
/// the repository's keys, when its policy checks signatures). `memory` is left with the
/// mirror's versions. A ref whose target's version.json is not the one remembered (the
/// mirror changed after that version was attested) fails with attest_errc::mismatch,
/// naming both digests: such a mirror is not attested again.
awaitable<result<mirror_statement>> describe_mirror(store::store& mirror, statement_inputs const& inputs,
                                                    remembered_versions& memory);

/// The statement of `text` when it is an attestation that `key` signed for `ns`, whatever
/// its age: what this daemon (or another with its key) stated before.
result<mirror_statement> own_statement(std::string_view text, verify::signing_key const& key, std::string_view ns);

/// What an earlier attestation of `mirror` says of its versions, when it was signed by
/// `key` for `ns` (whatever its age): a restarted daemon, or the next holder of the lease
/// with the same key, need not read every version again. Empty when there is none, or it
/// does not open with this key, or weighs more than `max_bytes` (a co-tenant's planted
/// file costs nothing but its read).
awaitable<remembered_versions> remembered_from_mirror(store::store& mirror, verify::signing_key const& key,
                                                      std::string ns, std::size_t max_bytes = max_attestation_bytes);

} // namespace mirror::attest
