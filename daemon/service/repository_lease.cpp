// The lease of a repository job whose mirror is in S3 (docs/operations.md, "Running several
// instances"): taken before a pass (or stood by while another daemon holds it), renewed
// while the job runs, released when the repository is another daemon's; a pass is cut when
// its lease is found lost.

#include "daemon/service/repository_job.hpp"

#include "daemon/service/coordinator.hpp"

#include "core/coord/fenced_store.hpp"
#include "core/coord/lease.hpp"
#include "core/coord/probe.hpp"
#include "core/io/errors.hpp"
#include "core/store/open_store.hpp"

namespace mirror::daemon {

void repository_job::note_lease(lease_change_kind what, std::string const& detail) {
    using event = metrics::lease_event;
    std::string const token = lease_ ? " (fencing token " + std::to_string(lease_->token()) + ")" : "";
    switch (what) {
    case lease_change_kind::taken:
        services_.log->info(name_, "lease taken: this daemon mirrors the repository" + token);
        services_.stats->lease_changed(name_, event::held);
        break;
    case lease_change_kind::taken_over:
        services_.log->warning(name_, "lease taken over from " + detail + ", whose lease ran out" + token);
        services_.stats->lease_changed(name_, event::taken_over);
        break;
    case lease_change_kind::lost:
        services_.log->warning(name_, "lease lost to " + detail + ": this daemon writes nothing more to the mirror");
        services_.stats->lease_changed(name_, event::lost);
        break;
    case lease_change_kind::released:
        services_.log->info(name_, "lease released: " + detail);
        services_.stats->lease_changed(name_, event::not_held);
        break;
    case lease_change_kind::standby:
        if (detail != standing_by_for_)
            services_.log->info(name_, "standing by: " + detail);
        services_.stats->lease_changed(name_, event::not_held);
        standing_by_for_ = detail;
        return;
    }
    standing_by_for_.clear();
}

awaitable<repository_job::lease_gate> repository_job::take_lease(std::string& problem) {
    auto const& r = repo();
    auto const& coord = *services_.coord;
    auto const& settings = coord.settings();
    if (reopen_lease_) { // the mirror moved: give up the old one's lease
        if (lease_busy_)
            co_return lease_gate::stand_by; // a renewal is using it: the next poll does this
        reopen_lease_ = false;
        if (lease_ && lease_->held())
            co_await lease_->release();
        lease_.reset();
        lease_store_.reset();
        lease_checked_ = lease_probed_ = false;
        reopen_stores_ = true; // the mirror store is wrapped anew
    }
    if (!lease_checked_) {
        auto options = store_options_for(*cfg_, r.mirror, *services_.throttles);
        options.observer = services_.stats->request_observer(name_, "coordination");
        auto opened = store::open_store(r.mirror, store::store_role::mirror, services_.pool, options);
        if (!opened)
            co_return lease_gate::go; // the pass says why the mirror cannot be opened
        lease_checked_ = true;
        if (!(*opened)->caps().conditional_writes)
            co_return lease_gate::go; // a folder: its lock keeps one writer, as for sync
        lease_store_ = std::move(*opened);
        lease_ = std::make_unique<coord::lease>(
            *lease_store_, coord.holder(),
            coord::lease_settings{".fdl-mirror/lease", settings.lease_duration, settings.max_clock_skew});
        reopen_stores_ = true; // wrap the mirror store in its fence
    }
    if (!lease_)
        co_return lease_gate::go;
    if (!lease_probed_ && settings.mode != config::coordination_mode::off) {
        std::string probe_key = ".fdl-mirror/probe-" + coord.instance(); // this daemon's own
        auto honoured = co_await coord::honours_conditional_writes(*lease_store_, probe_key);
        if (!honoured) {
            problem = "mirror: cannot tell whether it honours conditional writes: " + honoured.error().message;
            co_return lease_gate::refuse;
        }
        if (!*honoured && settings.mode == config::coordination_mode::leases) {
            problem = "mirror: " + lease_store_->describe() +
                      " does not honour conditional writes (If-None-Match and If-Match on PUT), which "
                      "coordination: leases needs; nothing is written (use a store that does, or run one daemon "
                      "with coordination: off)";
            co_return lease_gate::refuse;
        }
        lease_probed_ = true;
        if (!*honoured)
            services_.log->warning(name_, "mirror: " + lease_store_->describe() +
                                              " does not honour conditional writes: the lease is kept, but cannot "
                                              "stop two daemons writing at once; run only one (coordination: off "
                                              "says so and skips this check)");
    }
    if (!coord.assigned(name_)) {
        if (lease_->held() && !lease_busy_) {
            lease_busy_ = true;
            co_await lease_->release();
            lease_busy_ = false;
            note_lease(lease_change_kind::released, "the repository is assigned to another daemon");
        }
        note_lease(lease_change_kind::standby, "the repository is assigned to another daemon");
        co_return lease_gate::stand_by;
    }
    if (lease_->covers(coord.write_margin()))
        co_return lease_gate::go; // held, and renewed by keep_lease
    if (lease_busy_)
        co_return lease_gate::stand_by; // a renewal in flight decides; the next poll goes on
    bool const was_held = lease_->held();
    lease_busy_ = true;
    auto changed = co_await lease_->acquire_or_renew();
    lease_busy_ = false;
    note_lease_anomaly();
    if (!changed) {
        problem = "mirror: " + changed.error().message;
        co_return lease_gate::refuse;
    }
    switch (*changed) {
    case coord::lease_change::taken:
        note_lease(lease_->took_over() ? lease_change_kind::taken_over : lease_change_kind::taken,
                   lease_->taken_from());
        co_return lease_gate::go;
    case coord::lease_change::renewed:
        if (!was_held)
            note_lease(lease_change_kind::taken, "");
        co_return lease_gate::go;
    case coord::lease_change::lost:
        note_lease(lease_change_kind::lost, lease_->last_seen().holder);
        co_return lease_gate::stand_by;
    case coord::lease_change::held_by_other:
    case coord::lease_change::released:
        break;
    }
    note_lease(lease_change_kind::standby, "the lease is held by " + lease_->last_seen().holder);
    co_return lease_gate::stand_by;
}

void repository_job::note_lease_anomaly() {
    auto const& now = lease_->anomaly();
    if (now.empty() != lease_anomaly_.empty()) {
        if (!now.empty())
            services_.log->error(name_, now); // a holder with a wrong clock, or a forged lease
        else
            services_.log->info(name_, "the lease is sound again");
        services_.stats->lease_anomaly(name_, !now.empty());
    }
    lease_anomaly_ = now;
}

awaitable<bool> repository_job::renew_lease() {
    lease_busy_ = true;
    auto changed = co_await lease_->acquire_or_renew();
    lease_busy_ = false;
    note_lease_anomaly();
    if (!changed) {
        if (!lease_->covers(services_.coord->write_margin()))
            services_.log->warning(name_, "lease not renewed, and too little of it is left to write: " +
                                              changed.error().message);
        co_return true;
    }
    if (*changed != coord::lease_change::lost) {
        services_.log->debug(name_, "lease renewed (token " + std::to_string(lease_->last_seen().token) + ")");
        co_return true;
    }
    note_lease(lease_change_kind::lost, lease_->last_seen().holder);
    if (in_pass_) {
        lease_lost_in_pass_ = true;
        cancel_pass("the lease was lost to " + lease_->last_seen().holder);
    }
    co_return false;
}

awaitable<void> repository_job::keep_lease() {
    auto const& coord = *services_.coord;
    while (!stopping_) {
        keeper_wait_.expires_after(coord.renew_every());
        co_await keeper_wait_.async_wait(use_op);
        if (stopping_)
            break;
        if (!lease_ || !lease_->held() || lease_busy_)
            continue;
        if (!coord.assigned(name_) && !in_pass_) {
            lease_busy_ = true;
            co_await lease_->release();
            lease_busy_ = false;
            note_lease(lease_change_kind::released, "the repository is assigned to another daemon");
            continue;
        }
        co_await renew_lease();
    }
}

} // namespace mirror::daemon
