#pragma once
// One configured repository in the daemon: its stores, and the loop that runs a pass,
// reports it (log, metrics, state), and waits for the next. Never two passes of the same
// repository at once: the loop is the only thing that starts one.

#include "config/daemon_config.hpp"
#include "core/io/net.hpp"
#include "core/io/blocking_pool.hpp"
#include "core/io/memory_budget.hpp"
#include "core/sync/catalog_readers.hpp"
#include "core/sync/transfer_slots.hpp"
#include "daemon/common/log.hpp"
#include "daemon/metrics/metrics.hpp"
#include "daemon/service/pass_setup.hpp"
#include "daemon/service/mirror_attester.hpp"
#include "daemon/service/repository_lease.hpp"
#include "daemon/state/mirror_clocks.hpp"
#include "daemon/service/schedule.hpp"
#include "daemon/state/state_file.hpp"
#include "daemon/status/status_report.hpp"

#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>

#include <functional>
#include <memory>
#include <random>
#include <set>
#include <string>

namespace mirror::store {
class store;
} // namespace mirror::store
namespace mirror::daemon {

/// What every job shares; owned by the service, which outlives its jobs.
struct job_services {
    net::any_io_executor executor;
    io::blocking_pool* pool = nullptr;
    metrics* stats = nullptr;
    logger const* log = nullptr;
    state_dir const* state = nullptr;
    std::shared_ptr<sync::transfer_slots> transfers;
    sync::transfer_slots* passes = nullptr; ///< max_passes: a pass (and its audits) holds one
    throttle_registry* throttles = nullptr;
    class coordinator* coord = nullptr; ///< leases and the assignment of repositories
    io::memory_budget* memory = nullptr; ///< memory_limit's part for transfers and the look-ahead
    /// The process's catalog readers (the service's, replaced when a reload changes them).
    std::shared_ptr<sync::catalog_readers> const* catalog_readers = nullptr;
    /// How stores are opened from their locations: store::open_store, or what a test
    /// puts in its place (stores in memory).
    std::function<result<std::unique_ptr<store::store>>(std::string_view location, store::store_role role,
                                                        io::blocking_pool* pool, store::store_options const& options)>
        open_store = store::open_store;
    /// The clocks the repositories' leases read (tests move them by hand).
    coord::lease_clock lease_clock = coord::lease_clock::system();
};

class repository_job {
public:
    /// `cfg` must hold a repository named `name`.
    repository_job(job_services services, std::shared_ptr<config::daemon_config const> cfg, std::string name);
    ~repository_job();
    repository_job(repository_job const&) = delete;
    repository_job& operator=(repository_job const&) = delete;

    std::string const& name() const { return name_; }

    /// Starts the loop: a first pass now, then one per interval. `on_finished` is called
    /// (on the I/O thread) once the loop has ended after stop().
    void start(std::function<void()> on_finished);

    /// Takes a reloaded configuration that still holds this repository. Unchanged: nothing
    /// happens (false). Changed (true): the pass in hand finishes under the old settings,
    /// then a pass starts at once under the new ones (stores reopened when their settings
    /// changed).
    bool reconfigure(std::shared_ptr<config::daemon_config const> cfg);

    /// Starts no more passes; the pass in hand starts no new copy, lets those in flight
    /// end, moves refs to what it published, and ends (unless cancel_pass() cuts it first).
    void stop();
    /// stop(), for a repository removed from the configuration: from now on nothing is
    /// reported to the metrics or saved to the state folder.
    void retire();
    /// Starts a pass now rather than at the end of the wait in hand (nothing happens during
    /// a pass, or after stop()). `why` is logged.
    void poll_now(std::string const& why);
    /// What trigger() did.
    enum class trigger_result {
        starting, ///< the job was waiting for its next pass: that pass starts now
        queued,   ///< a pass (or the wait for a pass slot) is in hand: another starts right after it
        stopping, ///< the daemon stops: no pass starts
    };
    /// A pass now, whatever the wait in hand (the interval, or the backoff after failures):
    /// `fdl-mirror trigger` and POST /trigger. `who` is logged.
    trigger_result trigger(std::string const& who);
    /// An event (`source`: "webhook" or "s3") asks for a pass: trigger(), and the pass it
    /// starts counts as started by an event.
    trigger_result event_arrived(std::string const& source);
    /// Cuts the pass in hand, if any: it ends at its next operation, leaving the mirror
    /// consistent (nothing is published that was not verified), and is not counted as a
    /// failure. `why` is logged.
    void cancel_pass(std::string why);
    bool in_pass() const { return in_pass_; }
    /// In the wait between passes (neither in a pass nor waiting for a slot or a lease).
    bool waiting() const { return waiting_; }
    /// Why this repository makes the daemon unready at `now` (unix seconds), "" when it
    /// does not: it has never completed a pass (in this run or, by its state file, an
    /// earlier one), was configured longer ago than its pass_timeout, and is not another
    /// daemon's to mirror. Names the repository and its last error.
    std::string unready_reason(double now) const;
    /// What /status shows of this repository.
    repository_status status() const;

private:
    /// The lease of an S3 mirror, when the daemon coordinates (services_.coord).
    std::unique_ptr<repository_lease> make_lease();
    awaitable<void> loop();
    /// Waits, first come first served, for one of the max_passes slots; nullopt when
    /// stop() ended the wait.
    awaitable<std::optional<sync::transfer_slots::slot>> wait_for_pass_slot();
    /// Whether the pass starting at `now` re-examines the published versions (every
    /// recheck_interval, and after a reload changed the settings) or is quick.
    bool full_recheck_due(config::repository_settings const& settings, double now) const;
    /// The scheduled audits that are due, after a pass that completed, by the daemon
    /// holding the lease (daemon/service/repository_audits.cpp): a step of the mirror's scrub
    /// (scrub_interval) and the check of the origin's data files (origin_check_interval).
    awaitable<void> audits_if_due();
    /// Each with the settings of `r`, which the caller keeps alive (a reload may replace
    /// cfg_ meanwhile).
    awaitable<void> scrub_step(config::repository_config const& r);
    awaitable<void> origin_check(config::repository_config const& r);
    /// The mirror compared with each of `r.peers` (core/attest/compare.hpp): metrics, and
    /// each divergence logged as an error.
    awaitable<void> compare_peers(config::repository_config const& r);
    /// Runs `work` as a pass runs: a shutdown (cancel_pass) cuts it, and so does `limit`
    /// when given (cut_reason_ says which); nullopt when cut, or when it threw (a bug:
    /// cut_failure_ holds the exception).
    template <class Result>
    awaitable<std::optional<Result>> run_cuttable(awaitable<Result> work,
                                                  std::optional<std::chrono::milliseconds> limit = {});
    awaitable<void> one_pass();
    /// After taking the lease anew: the clocks the previous holder kept in the mirror
    /// (daemon/state/mirror_clocks.hpp) go on here.
    awaitable<void> continue_mirror_clocks();
    /// After a pass under the lease: the clocks into the mirror, when one started or stopped.
    awaitable<void> keep_mirror_clocks();
    /// After a pass that completed under the lease: the mirror's attestation, when the
    /// configuration asks for them (daemon/service/mirror_attester.hpp).
    awaitable<void> attest_mirror(config::daemon_config const& cfg, config::repository_config const& r,
                                  sync::sync_report const& report, double started);
    /// Once per holding of the repository: the attestation the mirror holds, exported.
    awaitable<void> adopt_attestation();
    /// Whether the operator paused the repository (`.fdl-mirror/paused` in its mirror, read
    /// before each pass and kept in the state); logs and exports each change.
    awaitable<bool> paused_now();
    /// The sync pass itself, with the options of `r`: its report, or nullopt when it was cut
    /// by a lost lease or a shutdown (nothing to count). `cut_outcome` is set when a
    /// deadline cut it.
    awaitable<std::optional<sync::sync_report>> run_pass(config::daemon_config const& cfg,
                                                         config::repository_config const& r, bool full_recheck,
                                                         std::string lease_refused,
                                                         std::optional<pass_outcome>& cut_outcome);
    /// What a pass that ended leaves: its record, metrics, log line, state and next wait.
    void account_pass(config::repository_config const& r, sync::sync_report const& report,
                      std::optional<pass_outcome> cut_outcome, double started, bool full_recheck);
    void remember_violations(sync::sync_report const& report, bool full_recheck);
    /// Opens the store at `location` with its `stores:` entry's settings, its requests
    /// counted as `traffic` ("origin", "mirror", "coordination"), buffers from `memory`.
    result<std::unique_ptr<store::store>> open_store_at(std::string const& location, store::store_role role,
                                                        char const* traffic, io::memory_budget* memory);
    /// The mirror's store alone (fenced under a lease), when not open: the clocks are read
    /// and written there whatever the origin does.
    std::optional<error> open_mirror();
    /// Opens the stores when they are not open; why one cannot be, naming it.
    std::optional<error> open_stores();
    /// What a scheduled audit's walks (the ledger, the origin's listing) may hold at once.
    std::size_t audit_memory() const;
    void close_stores();
    void save_state();
    config::repository_config const& repo() const;
    /// This repository in `cfg` (a copy of cfg_ that work across awaits keeps).
    config::repository_config const& repo_in(config::daemon_config const& cfg) const;

    job_services services_;
    std::shared_ptr<config::daemon_config const> cfg_;
    std::string name_;
    std::function<void()> on_finished_;

    std::unique_ptr<store::store> origin_;
    std::unique_ptr<store::store> mirror_;
    bool reopen_stores_ = false;

    net::steady_timer wait_;
    net::cancellation_signal cut_; ///< cuts the pass in hand
    net::cancellation_signal slot_wait_; ///< ends the wait for a pass slot (stop)
    std::string cut_reason_;
    std::exception_ptr cut_failure_; ///< what the last cuttable work threw, if it did
    bool stopping_ = false;
    bool last_pass_completed_ = false; ///< ok or held: the audits run after such a pass only
    bool waiting_ = false;          ///< in the wait between passes (what trigger() cuts short)
    bool trigger_pending_ = false;  ///< a trigger came while busy: no wait after this pass
    bool event_asked_ = false;      ///< an event asked for the next pass
    bool pass_by_event_ = false;    ///< the pass in hand (or the last) was asked for by an event
    /// When the last pass an event asked for began: the next waits for events.min_pass_gap.
    std::optional<std::chrono::steady_clock::time_point> last_event_pass_;
    /// An event within the gap asked for a pass: it starts no sooner than this.
    std::optional<std::chrono::steady_clock::time_point> event_not_before_;
    /// A pass of this run (and lease) completed: from then on, a change no event announced
    /// is one the events missed.
    bool events_baseline_ = false;
    bool retired_ = false;
    bool in_pass_ = false;
    bool settings_changed_ = false; ///< run the next pass at once
    bool force_full_recheck_ = false; ///< the next pass re-examines published versions whatever the interval
    /// The lease, when the daemon coordinates (it takes none for a folder mirror, which
    /// has its lock). Made at start; the keeper it runs cuts the pass when it is lost.
    std::unique_ptr<repository_lease> lease_;
    bool lease_lost_in_pass_ = false;

    repository_state state_;
    /// Origin refs unreadable at the last pass that read them: a violation if still so.
    std::set<std::string> unsettled_refs_;
    /// The violations already logged as errors (their messages): a finding is logged once,
    /// then at debug while it stands (remember_violations keeps this).
    std::set<std::string> logged_violations_;
    std::optional<mirror_clocks> written_clocks_; ///< as last written to (or read from) the mirror
    std::unique_ptr<mirror_attester> attester_;   ///< made at start
    std::optional<double> next_peer_compare_;     ///< unix seconds; unset: at the next audits
    std::optional<std::chrono::milliseconds> next_wait_; ///< until the next pass, chosen when the last one ended
    std::mt19937_64 random_;
    /// Unix seconds: when this job was made (start, or the reload that added it). The state
    /// folder keeps the first of these (repository_state::configured_since).
    double configured_at_ = 0;
};

} // namespace mirror::daemon
