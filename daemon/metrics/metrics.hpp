#pragma once
// The daemon's Prometheus metrics. Only metrics.cpp, metrics_passes.cpp and their private
// detail/metrics_impl.hpp know prometheus-cpp (docs/development.md, "Metrics, alerts and
// logs"). Names and labels are the ones docs/operations.md and systemd/fdl-mirror.rules.yml
// use. Every series a rule watches is created at 0 when its repository is declared, so
// that increase() sees the first failure.

#include "core/io/request_observer.hpp"
#include "core/sync/report.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mirror::sync {
struct scrub_step_report;
struct origin_data_report;
}

namespace mirror::daemon {

struct pass_record;
struct audit_record;

/// What fdl_mirror_build_info says.
struct build_facts {
    std::string version;
    std::string libssh; ///< "0.12.2"
    bool duckdb = false;
    std::string openssl; ///< "3.0.17": the library loaded, not the headers built against
};

/// A repository as the metrics know it.
struct repository_info {
    std::string name;
    double interval_seconds = 300;
    double scrub_period_seconds = 0; ///< 0: no scrub
};

enum class pass_outcome { ok, failed, held, timeout };

/// The sandboxed catalog readers' totals (metrics::set_catalog_readers).
struct catalog_reader_totals {
    std::uint64_t crashed = 0;
    std::uint64_t limited = 0;
    std::uint64_t started = 0;
};

/// One finished pass, as the metrics take it.
struct finished_pass {
    pass_outcome outcome = pass_outcome::ok;
    double finished_at = 0;      ///< unix seconds
    double duration_seconds = 0;
    /// How long each ref has been out of sync, by ref name (0 when in sync); refs missing
    /// here count 0.
    std::vector<std::pair<std::string, double>> ref_lag_seconds;
};

/// Used from the I/O thread only (prometheus-cpp's own locks make scraping from it safe).
class metrics {
public:
    explicit metrics(build_facts facts);
    ~metrics();
    metrics(metrics const&) = delete;
    metrics& operator=(metrics const&) = delete;

    /// Declares the configured repositories: creates their series at 0 and removes those
    /// of repositories no longer configured. Called at start and after each reload.
    void set_repositories(std::vector<repository_info> const& repositories);
    /// What became of `repo`'s lease (docs/operations.md, "Running several instances").
    enum class lease_event { held, not_held, taken_over, lost };
    void lease_changed(std::string const& repo, lease_event event);
    /// Whether `repo`'s lease, as last read, claimed longer than it may (a wrong clock or a
    /// forged lease): fdl_mirror_lease_anomaly.
    void lease_anomaly(std::string const& repo, bool found);
    /// `repo` stands by for another daemon's lease: its pass gauges (drift, held versions,
    /// origin_up and mirror_up, pending, the clocks, violations) leave this daemon's
    /// exposition, until a pass of its own brings them back.
    void standing_by(std::string const& repo);
    /// Whether `repo` is paused (fdl-mirror pause), as the last poll read: fdl_mirror_paused.
    void set_paused(std::string const& repo, bool paused);
    /// A reload (SIGHUP) at `when` (unix seconds) was applied, or refused (the old
    /// configuration runs on).
    void reload_finished(bool applied, double when);
    /// The max_passes slots: passes (with their audits) running, and waiting for a slot.
    void set_passes(std::size_t running, std::size_t waiting, std::size_t max);
    /// The memory budget for transfers (memory_limit less the catalog readers' part).
    void set_transfer_memory(std::uint64_t limit, std::uint64_t in_use, std::uint64_t peak, std::size_t waiting);
    /// The catalog gate's totals since the start (sync::catalog_readers::process_counts):
    /// catalogs read, and the batches they were read in.
    void set_catalog_reads(std::uint64_t catalogs, std::uint64_t batches);
    /// The sandboxed catalog readers' totals since the start
    /// (catalog::sandboxed_reader::process_failures): catalogs whose reader crashed or went
    /// past a limit, and reader processes started.
    void set_catalog_readers(catalog_reader_totals totals);
    /// How many daemons share the repositories, as this one last saw (1 when alone).
    void set_members(std::size_t live);
    /// The times a previous run of the daemon recorded for `repo` (its state file), so that
    /// a restart does not reset fdl_mirror_last_success_timestamp_seconds to 0.
    void restore_times(std::string const& repo, std::optional<double> last_success, std::optional<double> last_attempt);
    /// When the passes of `repo` failing in a row began (unset: the last pass completed):
    /// fdl_mirror_failing_since_timestamp_seconds, 0 when unset.
    void set_failing_since(std::string const& repo, std::optional<double> since);
    /// Since when each ref of `repo` has been behind, and each version held (the oldest
    /// max_held_series of them), from its record: at start (the state file's) and after
    /// each pass. Timestamps survive restarts and reason changes, so rules on them do not
    /// reset as `for:` clauses do.
    void set_clocks(std::string const& repo, pass_record const& record);
    static constexpr std::size_t max_held_series = 20;
    /// The most refs of one repository with series of their own (drift and behind-since);
    /// fdl_mirror_refs and fdl_mirror_refs_out_of_sync count them all.
    static constexpr std::size_t max_ref_series = 100;
    /// The scheduled audits' times (last full recheck, the scrub's round), from the record.
    void set_audits(std::string const& repo, audit_record const& audits);
    /// A scrub step of `repo` ended with `report`; `audits` is the record after it.
    void scrub_step(std::string const& repo, sync::scrub_step_report const& report, audit_record const& audits);
    /// A check of `repo`'s origin data files ended with `report`: its violations counted in
    /// fdl_mirror_immutability_violations_total, its time from `audits`.
    void origin_check(std::string const& repo, sync::origin_data_report const& report, audit_record const& audits);
    /// A pass of `repo` starts at `now` (unix seconds).
    void pass_started(std::string const& repo, double now);
    /// A pass of `repo` ended with `report`: drift, held versions, violations, signature
    /// checks, traffic and what is pending are taken from it. The pending gauges keep their
    /// last values after a pass that stopped before the refs and found nothing pending
    /// (it did not get far enough to know).
    void pass_finished(std::string const& repo, sync::sync_report const& report, finished_pass const& pass);

    /// The mirror of `repo` was attested at `attested_at`, until `expires` (unix seconds),
    /// with the attestation settings' interval and validity (in seconds).
    void attestation_written(std::string const& repo, double attested_at, double expires, double interval,
                             double validity);
    /// An attestation of `repo` could not be made or written: counted.
    void attestation_failed(std::string const& repo);

    /// The mirror of `repo` compared with its peer `peer` at `when`: whether the peer could
    /// be read, the divergences between the two, how many versions the peer is behind on
    /// its most behind ref, and the configured bound. Peers compared before and not in
    /// `peers` lose their series.
    struct peer_result {
        std::string peer;
        bool up = false;
        std::size_t divergences = 0;
        std::uint64_t behind = 0;
    };
    void peers_compared(std::string const& repo, std::vector<peer_result> const& peers, std::uint32_t max_lag,
                        double when);

    /// Passes driven by events (daemon/events/). `source` is "webhook" or "s3"; `reason` one
    /// of daemon::event_refusal's words.
    void event_received(std::string const& source);
    void event_refused(std::string const& source, std::string const& reason);
    void events_ignored(std::string const& source, std::size_t records);
    void event_accepted(std::string const& repo, std::string const& source);
    /// Whether `repo` takes events (its series at 0 when it does, gone when it no longer
    /// does), with the times its record kept across restarts (0: never).
    void set_event_clocks(std::string const& repo, bool expected, double last_event, double unannounced_change);
    /// A pass of `repo` began at `started` (unix seconds): started by an event, or, when not
    /// and it found the origin changed, an unannounced change.
    void pass_by_event(std::string const& repo);
    /// An authentic event of `repo` that starts no pass of its own (one is pending already).
    void event_coalesced(std::string const& repo);
    void change_unannounced(std::string const& repo, double started);

    /// An observer (for store::store_options::observer) that counts the requests of one
    /// store of `repo`, a declared repository, into fdl_mirror_requests_total and
    /// fdl_mirror_request_errors_total with `store_role` ("origin" or "mirror") as the
    /// `store` label. Counts from the I/O thread, allocating only for a label set it has
    /// not counted before. Once set_repositories removes `repo` (its series go), or this
    /// object is destroyed, the observer counts nothing: it may outlive both.
    std::shared_ptr<io::request_observer> request_observer(std::string const& repo,
                                                              std::string const& store_role);

    /// The exposition, in Prometheus' text format 0.0.4.
    std::string text() const;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

/// "ok", "failed", "held", "timeout".
char const* to_string(pass_outcome outcome) noexcept;

} // namespace mirror::daemon
