#include "daemon/service/repository_lease.hpp"

#include "daemon/common/log.hpp"
#include "daemon/metrics/metrics.hpp"
#include "daemon/service/coordinator.hpp"

#include "core/coord/fenced_store.hpp"
#include "core/coord/probe.hpp"

#include <boost/asio/co_spawn.hpp>

namespace mirror::daemon {

repository_lease::repository_lease(lease_context context)
    : context_(std::move(context)), keeper_wait_(context_.executor), keeper_ended_(context_.executor) {}

repository_lease::~repository_lease() = default;

void repository_lease::note(lease_change_kind what, std::string const& detail) {
    using event = metrics::lease_event;
    auto const& name = context_.repository;
    auto& log = *context_.log;
    std::string const token = lease_ ? " (fencing token " + std::to_string(lease_->token()) + ")" : "";
    switch (what) {
    case lease_change_kind::taken:
        log.info(name, "lease taken" + (detail.empty() ? std::string() : " " + detail) +
                           ": this daemon mirrors the repository" + token);
        context_.stats->lease_changed(name, event::held);
        break;
    case lease_change_kind::taken_over:
        log.warning(name, "lease taken over from " + detail + token);
        context_.stats->lease_changed(name, event::taken_over);
        break;
    case lease_change_kind::lost:
        log.warning(name, "lease lost to " + detail + ": this daemon writes nothing more to the mirror");
        context_.stats->lease_changed(name, event::lost);
        break;
    case lease_change_kind::released:
        log.info(name, "lease released: " + detail);
        context_.stats->lease_changed(name, event::not_held);
        break;
    case lease_change_kind::standby:
        if (detail != standing_by_for_)
            log.info(name, "standing by: " + detail);
        context_.stats->lease_changed(name, event::not_held);
        standing_by_for_ = detail;
        return;
    }
    standing_by_for_.clear();
}

void repository_lease::note_anomaly() {
    auto const& now = lease_->anomaly();
    if (now.empty() != anomaly_.empty()) {
        if (!now.empty())
            context_.log->error(context_.repository, now); // a holder with a wrong clock, or a forged lease
        else
            context_.log->info(context_.repository, "the lease is sound again");
        context_.stats->lease_anomaly(context_.repository, !now.empty());
    }
    anomaly_ = now;
}

bool repository_lease::open_lease() {
    if (checked_)
        return lease_ != nullptr;
    auto opened = context_.open_store();
    if (!opened)
        return false; // the pass says why the mirror cannot be opened
    checked_ = true;
    if (!(*opened)->caps().conditional_writes)
        return false; // a folder: its lock keeps one writer, as for sync
    auto const& settings = context_.coord->settings();
    store_ = std::move(*opened);
    coord::lease_settings lease_settings{".fdl-mirror/lease", settings.lease_duration, settings.max_clock_skew};
    if (context_.longest_wait)
        lease_settings.idle_patience = context_.longest_wait() + settings.lease_duration;
    if (context_.coord->spreads()) {
        auto const* coord = context_.coord;
        lease_settings.holder_gone = [coord](std::string_view instance) { return coord->known_gone(instance); };
    }
    lease_ = std::make_unique<coord::lease>(*store_, context_.coord->holder(), std::move(lease_settings), context_.clock);
    rewrap_ = true; // wrap the mirror store in its fence
    return true;
}

awaitable<bool> repository_lease::probe(std::string& problem) {
    auto const& coord = *context_.coord;
    auto const mode = coord.settings().mode;
    if (probed_ || mode == config::coordination_mode::off)
        co_return true;
    std::string probe_key = ".fdl-mirror/probe-" + coord.instance(); // this daemon's own
    auto honoured = co_await coord::honours_conditional_writes(*store_, probe_key);
    if (!honoured) {
        problem = "mirror: cannot tell whether it honours conditional writes: " + honoured.error().message;
        co_return false;
    }
    if (!*honoured && mode == config::coordination_mode::leases) {
        problem = "mirror: " + store_->describe() +
                  " does not honour conditional writes (If-None-Match and If-Match on PUT), which "
                  "coordination: leases needs; nothing is written (use a store that does, or run one daemon "
                  "with coordination: off)";
        co_return false;
    }
    probed_ = true;
    if (!*honoured)
        context_.log->warning(context_.repository,
                              "mirror: " + store_->describe() +
                                  " does not honour conditional writes: the lease is kept, but cannot stop two "
                                  "daemons writing at once; run only one (coordination: off says so and skips this "
                                  "check)");
    co_return true;
}

std::string repository_lease::assigned_elsewhere() const {
    auto const owner = context_.coord->assignee(context_.repository);
    return owner.empty() ? std::string("the repository is assigned to another daemon")
                         : "the repository is assigned to daemon '" + owner + "'";
}

awaitable<void> repository_lease::release_if_held() {
    if (!lease_ || !lease_->mine() || busy_)
        co_return;
    busy_ = true;
    co_await lease_->release();
    busy_ = false;
    note(lease_change_kind::released, assigned_elsewhere());
}

awaitable<repository_lease::gate> repository_lease::take(std::string& problem) {
    if (reopen_) { // the mirror moved: give up the old one's lease
        if (busy_)
            co_return gate::stand_by; // a renewal is using it: the next poll does this
        reopen_ = false;
        if (lease_ && lease_->mine())
            co_await lease_->release();
        lease_.reset();
        store_.reset();
        checked_ = probed_ = false;
        rewrap_ = true; // the mirror store is wrapped anew
    }
    if (!open_lease())
        co_return gate::go;
    bool const probed = co_await probe(problem);
    if (!probed)
        co_return gate::refuse;
    if (!context_.coord->assigned(context_.repository)) {
        co_await release_if_held();
        note(lease_change_kind::standby, assigned_elsewhere());
        co_return gate::stand_by;
    }
    if (lease_->covers(context_.coord->write_margin()))
        co_return gate::go; // held, and renewed by the keeper
    if (busy_)
        co_return gate::stand_by; // a renewal in flight decides; the next poll goes on
    auto const taken = co_await acquire(problem);
    co_return taken;
}

awaitable<repository_lease::gate> repository_lease::acquire(std::string& problem) {
    bool const was_held = lease_->mine(); // active again after a rest is no news
    busy_ = true;
    auto changed = co_await lease_->acquire_or_renew();
    busy_ = false;
    note_anomaly();
    if (!changed) {
        problem = "mirror: " + changed.error().message;
        if (lease_->mine() && !lease_->covers(context_.coord->write_margin()) && !lapsed_) {
            // Idle, and it could not be made active (the store down): not counted on.
            lapsed_ = true;
            context_.stats->lease_changed(context_.repository, metrics::lease_event::not_held);
        }
        co_return gate::refuse;
    }
    switch (*changed) {
    case coord::lease_change::taken:
        lapsed_ = false;
        newly_taken_ = true;
        if (lease_->reclaimed())
            note(lease_change_kind::taken, "from " + lease_->taken_from() + ", an earlier run of this instance");
        else if (lease_->took_over())
            note(lease_change_kind::taken_over, lease_->taken_from() + ", " + lease_->takeover_reason());
        else
            note(lease_change_kind::taken, "");
        co_return gate::go;
    case coord::lease_change::renewed:
        if (!was_held || std::exchange(lapsed_, false))
            note(lease_change_kind::taken, "");
        co_return gate::go;
    case coord::lease_change::lost:
        note(lease_change_kind::lost, lease_->last_seen().holder);
        co_return gate::stand_by;
    case coord::lease_change::held_by_other:
    case coord::lease_change::released:
        break;
    }
    note(lease_change_kind::standby, "the lease is held by " + lease_->last_seen().holder);
    co_return gate::stand_by;
}

std::unique_ptr<store::store> repository_lease::fence(std::unique_ptr<store::store> mirror) const {
    if (!lease_)
        return mirror;
    return std::make_unique<coord::fenced_store>(std::move(mirror), *lease_, context_.coord->write_margin());
}

bool repository_lease::mirror_needs_rewrap() { return std::exchange(rewrap_, false); }

void repository_lease::forget_unless_held() {
    if (!lease_ || lease_->mine() || busy_)
        return;
    lease_.reset();
    store_.reset();
    checked_ = probed_ = false;
}

awaitable<bool> repository_lease::renew() {
    busy_ = true;
    auto changed = co_await lease_->acquire_or_renew();
    busy_ = false;
    note_anomaly();
    if (!changed) {
        if (!lease_->covers(context_.coord->write_margin())) {
            context_.log->warning(context_.repository, "lease not renewed, and too little of it is left to write: " +
                                                           changed.error().message);
            if (!lapsed_) { // fdl_mirror_lease_held says whether this daemon may write now
                lapsed_ = true;
                context_.stats->lease_changed(context_.repository, metrics::lease_event::not_held);
            }
        }
        co_return true;
    }
    if (std::exchange(lapsed_, false) && *changed != coord::lease_change::lost)
        context_.stats->lease_changed(context_.repository, metrics::lease_event::held);
    if (*changed != coord::lease_change::lost) {
        context_.log->debug(context_.repository,
                            "lease renewed (token " + std::to_string(lease_->last_seen().token) + ")");
        co_return true;
    }
    note(lease_change_kind::lost, lease_->last_seen().holder);
    if (lost_)
        lost_(lease_->last_seen().holder);
    co_return false;
}

awaitable<void> repository_lease::keep() {
    auto const& coord = *context_.coord;
    while (!stopping_) {
        keeper_wait_.expires_after(coord.renew_every());
        co_await keeper_wait_.async_wait(use_op);
        if (stopping_)
            break;
        if (!lease_ || !lease_->mine() || busy_)
            continue;
        if (lease_->held()) {
            co_await renew(); // a pass (or its audits) runs under it
            continue;
        }
        // Idle between passes: nothing to write, unless the repository went to another daemon.
        if (!coord.assigned(context_.repository) && !(in_pass_ && in_pass_()))
            co_await release_if_held();
    }
}

awaitable<void> repository_lease::wait_until_idle_requests() {
    net::steady_timer pause(context_.executor);
    while (busy_) {
        pause.expires_after(std::chrono::milliseconds(20));
        co_await pause.async_wait(use_op);
    }
}

awaitable<void> repository_lease::rest(std::chrono::milliseconds next_wait) {
    if (!lease_ || !lease_->held())
        co_return;
    co_await wait_until_idle_requests(); // one request at a time on the lease's tag
    if (!lease_->held())
        co_return; // the renewal found it lost
    busy_ = true;
    auto rested = co_await lease_->rest(next_wait + context_.coord->settings().lease_duration);
    busy_ = false;
    if (!rested) {
        context_.log->warning(context_.repository, "lease not left idle (it stays active until it runs out, then the "
                                                   "next pass takes it again): " +
                                                       rested.error().message);
        co_return;
    }
    if (*rested == coord::lease_change::lost) {
        note(lease_change_kind::lost, lease_->last_seen().holder);
        co_return;
    }
    context_.log->debug(context_.repository, "lease idle until the next pass (token " +
                                                 std::to_string(lease_->token()) + ")");
}

void repository_lease::start_keeper(std::function<bool()> in_pass, std::function<void(std::string const&)> lost) {
    in_pass_ = std::move(in_pass);
    lost_ = std::move(lost);
    keeper_running_ = true;
    net::co_spawn(context_.executor, keep(), [this](std::exception_ptr failure) {
        keeper_running_ = false;
        keeper_ended_.cancel();
        if (failure)
            context_.log->error(context_.repository, "internal error: the lease is no longer renewed");
    });
}

awaitable<void> repository_lease::stop() {
    stopping_ = true;
    keeper_wait_.cancel();
    while (keeper_running_) {
        keeper_ended_.expires_at(net::steady_timer::time_point::max());
        co_await keeper_ended_.async_wait(use_op);
    }
    co_await wait_until_idle_requests();
    if (lease_ && lease_->mine()) {
        auto released = co_await lease_->release();
        context_.log->info(context_.repository, released ? "lease released"
                                                         : "lease not released (it runs out by itself): " +
                                                               released.error().message);
    }
}

} // namespace mirror::daemon
