#pragma once
// The daemon's attestations of one repository's mirror (docs/attestations.md): after a pass
// that completed, the lease holder signs what the mirror holds and writes it to
// `.fdl-mirror/attestation.json`, so that its readers can check that the mirror was verified,
// against which keys, that nobody changed it since, and that someone still keeps it.

#include "config/daemon_config.hpp"
#include "core/attest/describe.hpp"
#include "core/io/net.hpp"
#include "core/store/store.hpp"
#include "core/sync/report.hpp"
#include "verify/signature_policy.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace mirror::daemon {

class logger;
class metrics;

/// What a pass says of its repository to its attestation.
struct attestation_pass {
    std::string origin; ///< locations as configured (secrets are taken out of the statement)
    std::string mirror;
    verify::trust_settings const* trust = nullptr;
    std::optional<std::filesystem::path> allowed_signers; ///< the trusted keys' file, named by its sha256
    std::optional<std::uint64_t> fencing_token;          ///< the lease's, when one is held
    std::string instance;
    std::size_t concurrency = 4;
    std::string tool_version;
};

class mirror_attester {
public:
    /// `max_bytes`: the most an attestation read back from the mirror may weigh
    /// (attest::attestation_limit of the daemon's memory budget).
    mirror_attester(std::string repository, logger const& log, metrics& stats,
                    std::size_t max_bytes = attest::max_attestation_bytes);

    /// After a pass that ended without a fatal error, begun at `verified_at` (unix
    /// seconds): writes the mirror's attestation when the pass changed the mirror, when
    /// this daemon wrote none yet, or when its last one is `settings.interval` old. The key
    /// is read from its file each time (replacing the file rotates it). A failure is
    /// logged and counted (fdl_mirror_attestation_failures_total); the mirror keeps the
    /// attestation it had.
    awaitable<void> after_pass(store::store& mirror, config::attestation_settings const& settings,
                               attestation_pass const& pass, sync::sync_report const& report,
                               std::int64_t verified_at);

    /// The lease went to another daemon, or the mirror's location changed: the next
    /// attestation starts from what the mirror holds.
    void forget();

    /// Once this daemon mirrors the repository (its first pass, or a lease taken anew):
    /// the times of the attestation the mirror holds, when this key signed it, are
    /// exported as if written here, so that FdlMirrorAttestationsStopped goes on through a
    /// restart or a failover (whose new holder may not attest soon: its passes may fail).
    awaitable<void> adopt(store::store& mirror, config::attestation_settings const& settings);
    bool adopted() const { return adopted_; }

private:
    std::string repository_;
    logger const& log_;
    metrics& stats_;
    std::optional<attest::remembered_versions> memory_; ///< nullopt: read from the mirror first
    std::optional<std::int64_t> last_written_;
    std::string last_key_; ///< the fingerprint of the key last signed with
    bool adopted_ = false;
    std::size_t max_bytes_;
};

} // namespace mirror::daemon
