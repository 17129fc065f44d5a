#pragma once
// The lease of one repository job whose mirror is in S3 (docs/operations.md, "Running
// several instances"): made active before a pass (or stood by while another daemon holds
// it), renewed by a keeper coroutine while the pass runs, left idle after it until the next
// one (one write each way, nothing between passes), released when the repository is
// another daemon's or the job ends; a pass is cut when its lease is found lost. A mirror
// without conditional writes (a folder) takes no lease: its lock keeps one writer.
//
// It owns the lease, the store its requests go through, the probe of that store and the
// keeper; the job owns the passes. Tests drive it with any store and a fake lease clock.

#include "core/coord/lease.hpp"
#include "core/io/net.hpp"
#include "core/store/store.hpp"
#include "verify/error.hpp"

#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace mirror::daemon {

class coordinator;
class logger;
class metrics;

/// What a repository's lease needs from the daemon.
struct lease_context {
    net::any_io_executor executor;
    coordinator const* coord = nullptr;
    logger const* log = nullptr;
    metrics* stats = nullptr;
    std::string repository;
    /// Opens the mirror's store for the lease's own requests (the "coordination" traffic).
    /// Called once, and again after reopen() or a failed pass.
    std::function<result<std::unique_ptr<store::store>>()> open_store;
    /// The longest wait between two passes of the repository (its interval or backoff_max,
    /// with jitter): how long another daemon's idle lease may stay unrenewed.
    std::function<std::chrono::milliseconds()> longest_wait;
    coord::lease_clock clock = coord::lease_clock::system();
};

enum class lease_change_kind { taken, taken_over, lost, released, standby };

class repository_lease {
public:
    /// Whether a pass may run now, as far as the lease goes.
    enum class gate {
        go,       ///< the lease is held (or the mirror takes none): write
        stand_by, ///< another daemon's to mirror, or a request in flight decides: nothing to count
        refuse,   ///< the lease cannot be judged or kept (the problem says why): a failed pass
    };

    explicit repository_lease(lease_context context);
    ~repository_lease();
    repository_lease(repository_lease const&) = delete;
    repository_lease& operator=(repository_lease const&) = delete;

    /// Before a pass: opens and probes the lease's store the first time, then takes or
    /// renews the lease, or stands by. `problem` says why on refuse.
    awaitable<gate> take(std::string& problem);
    /// After a pass (and the audits after it): the lease goes idle for `next_wait` and a
    /// lease more, in one write, and the keeper writes nothing until the next take().
    awaitable<void> rest(std::chrono::milliseconds next_wait);
    /// Wraps the mirror store of a pass in the lease's fence when a lease is in force:
    /// every write under the lease, refs moved only over what this daemon saw.
    std::unique_ptr<store::store> fence(std::unique_ptr<store::store> mirror) const;
    /// True once, after take() found a lease come or go: the mirror store must be opened
    /// (and fenced) anew.
    bool mirror_needs_rewrap();
    /// True once, after take() took the lease anew (free, run out, or from another holder,
    /// not a renewal of this daemon's own): the job continues the clocks kept in the mirror.
    bool newly_taken() { return std::exchange(newly_taken_, false); }

    /// The mirror moved (a reload): the next take() releases the old mirror's lease and
    /// starts again on the new one.
    void reopen() { reopen_ = true; }
    /// After a failed pass: the lease's store is opened afresh at the next take(), unless
    /// it holds the lease (broken connections, expired credentials).
    void forget_unless_held();

    /// Starts the keeper: every renew_every, renews an active lease (a pass runs), or
    /// releases an idle one when the repository is assigned elsewhere and `in_pass()` is false. `lost(holder)` is called
    /// when a renewal finds the lease taken by `holder`.
    void start_keeper(std::function<bool()> in_pass, std::function<void(std::string const& holder)> lost);
    /// Ends the keeper, then releases a held lease, so that the next daemon (or this one
    /// restarted) need not wait it out.
    awaitable<void> stop();

    bool in_force() const { return lease_ != nullptr; }
    bool held() const { return lease_ && lease_->held(); }
    /// Held or idle between this daemon's passes: this daemon mirrors the repository.
    bool mine() const { return lease_ && lease_->mine(); }
    /// The holder last logged as having the lease while this daemon stood by, "" when
    /// it did not stand by.
    std::string const& standing_by_for() const { return standing_by_for_; }
    /// What was wrong with the lease as last read (another holder's claiming longer than
    /// lease_duration + max_clock_skew); empty when nothing was.
    std::string const& anomaly() const { return anomaly_; }
    /// The lease itself, when in force (tests, and the fencing token in logs).
    coord::lease const* lease() const { return lease_.get(); }

private:
    /// "the repository is assigned to daemon 'beta'": whom a standby defers to.
    std::string assigned_elsewhere() const;
    /// Opens the lease's store and makes the lease, the first time; false when the mirror
    /// takes no lease (or cannot be opened: the pass says why).
    bool open_lease();
    awaitable<bool> probe(std::string& problem);
    awaitable<void> release_if_held();
    awaitable<gate> acquire(std::string& problem);
    /// One renewal, never two requests at once. False when it found the lease lost.
    awaitable<bool> renew();
    awaitable<void> keep();
    /// Waits until no lease request is in flight (a renewal the keeper started).
    awaitable<void> wait_until_idle_requests();
    void note(lease_change_kind what, std::string const& detail);
    /// Takes the lease's anomaly as last read: at attention level (status, metric, alert
    /// FdlMirrorLeaseAnomaly), logged when it appears and when it clears.
    void note_anomaly();

    lease_context context_;
    std::unique_ptr<store::store> store_;
    std::unique_ptr<coord::lease> lease_;
    bool checked_ = false; ///< whether the mirror takes a lease is known
    bool probed_ = false;
    bool reopen_ = false;
    bool rewrap_ = false;
    bool newly_taken_ = false;
    bool busy_ = false; ///< a lease request is in flight
    bool lapsed_ = false; ///< held, but unrenewed past the write margin: not counted on (metric at 0)
    bool stopping_ = false;
    bool keeper_running_ = false;
    std::function<bool()> in_pass_;
    std::function<void(std::string const&)> lost_;
    std::string standing_by_for_;
    std::string anomaly_;
    net::steady_timer keeper_wait_;
    net::steady_timer keeper_ended_;
};

} // namespace mirror::daemon
