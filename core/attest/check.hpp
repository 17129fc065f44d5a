#pragma once
// A consumer's check of a mirror against its attestation (`fdl-mirror verify MIRROR
// --attestation-signers FILE`): the signature, by a key the consumer trusts; the time, not
// expired and not older than the consumer allows; and the mirror itself, every ref and
// every version.json as attested. Needs read access to the mirror and nothing else.

#include "core/attest/statement.hpp"
#include "core/io/net.hpp"
#include "core/store/store.hpp"
#include "verify/allowed_signers.hpp"
#include "verify/signature_policy.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mirror::attest {

struct check_settings {
    verify::allowed_signers trusted;
    std::string ns{default_namespace};
    std::optional<std::chrono::seconds> max_age; ///< refuse a statement made longer ago than this
    std::int64_t now = 0;                        ///< unix seconds the times are checked at
    std::size_t concurrency = 8;                 ///< version.json reads at once
    /// A statement may be dated this far past `now` (the clocks of the daemon and the
    /// consumer disagree); further, it is refused as stale.
    std::chrono::seconds clock_skew{300};
    /// The most the attestation may weigh (attestation_limit of the memory budget).
    std::size_t max_bytes = max_attestation_bytes;
};

struct check_report {
    std::optional<mirror_statement> statement; ///< when its signature was accepted
    std::optional<verify::signer_info> signer;
    /// Each problem, classified attest_errc (attestation.mismatch names the ref or
    /// version); a store error when the mirror could not be read.
    std::vector<error> problems;
    std::size_t refs_checked = 0;
    std::size_t versions_checked = 0;
    bool ok() const { return problems.empty(); }
};

/// Checks `mirror` against the attestation it holds. A mismatch found while the daemon
/// re-attested (the attestation's bytes changed during the check) is checked once more
/// against the new one.
awaitable<check_report> check_attestation(store::store& mirror, check_settings const& settings);

} // namespace mirror::attest
