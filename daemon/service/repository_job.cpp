#include "daemon/service/repository_job.hpp"

#include "daemon/state/mirror_clocks.hpp"
#include "daemon/status/status_report.hpp"

#include "daemon/service/coordinator.hpp"
#include "daemon/state/mirror_lock.hpp"
#include "daemon/service/job_errors.hpp"
#include "daemon/service/pass_log.hpp"

#include "core/coord/pause.hpp"
#include "core/io/errors.hpp"
#include "core/store/open_store.hpp"
#include "core/store/throttled_store.hpp"
#include "core/sync/errors.hpp"
#include "core/sync/sync_pass.hpp"

#include "core/io/cuttable.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <optional>

namespace mirror::daemon {

namespace {

poll_settings poll_of(config::repository_settings const& s) {
    return poll_settings{s.interval, s.jitter, s.backoff_max};
}

/// How a pass that returned a report went.
pass_outcome outcome_of(sync::sync_report const& report) {
    switch (report.exit_code()) {
    case 0: return pass_outcome::ok;
    case 1: return report.fatal ? pass_outcome::failed : pass_outcome::held;
    default: return pass_outcome::failed;
    }
}

config::repository_config const& repo_of(config::daemon_config const& cfg, std::string const& name) {
    for (auto const& r : cfg.repositories)
        if (r.name == name)
            return r;
    throw std::logic_error("repository '" + name + "' is not in the configuration"); // a bug of the caller
}

} // namespace

repository_job::repository_job(job_services services, std::shared_ptr<config::daemon_config const> cfg,
                               std::string name)
    : services_(std::move(services)), cfg_(std::move(cfg)), name_(std::move(name)), wait_(services_.executor),
      random_(std::random_device{}()),
      configured_at_(record_now()) {}

repository_job::~repository_job() = default;

config::repository_config const& repository_job::repo() const { return repo_of(*cfg_, name_); }

config::repository_config const& repository_job::repo_in(config::daemon_config const& cfg) const {
    return repo_of(cfg, name_);
}

std::unique_ptr<repository_lease> repository_job::make_lease() {
    lease_context context;
    context.executor = services_.executor;
    context.coord = services_.coord;
    context.log = services_.log;
    context.stats = services_.stats;
    context.repository = name_;
    context.clock = services_.lease_clock;
    context.open_store = [this] { // the mirror read at each call: a reload may have moved it
        return open_store_at(repo().mirror, store::store_role::mirror, "coordination", nullptr);
    };
    context.longest_wait = [this] {
        auto const poll = poll_of(repo().settings);
        auto const longest = std::max(poll.interval, poll.backoff_max);
        return std::chrono::milliseconds(static_cast<std::int64_t>(
            static_cast<double>(longest.count()) * (1.0 + std::clamp(poll.jitter, 0.0, 1.0))));
    };
    return std::make_unique<repository_lease>(std::move(context));
}

void repository_job::start(std::function<void()> on_finished) {
    on_finished_ = std::move(on_finished);
    if (services_.state != nullptr) {
        std::string warning;
        state_ = services_.state->load(name_, &warning);
        if (!warning.empty())
            services_.log->warning(name_, "state forgotten: " + warning);
        // A state file from before failing_since was kept: the failures' clock starts now.
        if (state_.consecutive_failures > 0 && !state_.failing_since)
            state_.failing_since = record_now();
        if (!state_.configured_since) { // new here (or a state file from before it was kept)
            state_.configured_since = configured_at_;
            // Saved as loaded (not save_state(): no origin is open yet to take its cache from).
            if (auto saved = services_.state->save(name_, state_); !saved)
                services_.log->warning(name_, "state not saved: " + saved.error().message);
        }
        services_.stats->restore_times(name_, state_.last_success, state_.last_attempt);
        services_.stats->set_failing_since(name_, state_.failing_since);
        services_.stats->set_paused(name_, state_.paused.has_value());
        services_.stats->set_clocks(name_, state_.record);
        services_.stats->set_audits(name_, state_.record.audits);
    }
    services_.stats->set_event_clocks(name_, repo().events.any(), state_.record.last_event.value_or(0),
                                      state_.record.unannounced_change.value_or(0));
    attester_ = std::make_unique<mirror_attester>(
        name_, *services_.log, *services_.stats,
        attest::attestation_limit(services_.memory != nullptr ? services_.memory->capacity() : 0));
    if (services_.coord != nullptr) {
        lease_ = make_lease();
        lease_->start_keeper([this] { return in_pass_; }, [this](std::string const& holder) {
            if (!in_pass_)
                return;
            lease_lost_in_pass_ = true;
            cancel_pass("the lease was lost to " + holder);
        });
    }
    net::co_spawn(services_.executor, loop(), [this](std::exception_ptr failure) {
        if (failure) { // a bug: say so, and let the service go on without this repository
            try {
                std::rethrow_exception(failure);
            } catch (std::exception const& e) {
                services_.log->error(name_, std::string("internal error, repository stopped: ") + e.what());
            }
        }
        if (on_finished_)
            on_finished_();
    });
}

bool repository_job::reconfigure(std::shared_ptr<config::daemon_config const> cfg) {
    auto const& before = repo();
    auto const& after = repo_of(*cfg, name_);
    bool const stores_changed = before.origin != after.origin || before.mirror != after.mirror ||
                                !same_store_settings(*cfg_, *cfg, after.origin) ||
                                !same_store_settings(*cfg_, *cfg, after.mirror);
    bool const follows_other = before.include_refs != after.include_refs || before.exclude_refs != after.exclude_refs ||
                               before.head != after.head || before.depth != after.depth;
    if (before.events != after.events)
        services_.stats->set_event_clocks(name_, after.events.any(), state_.record.last_event.value_or(0),
                                          state_.record.unannounced_change.value_or(0));
    bool const changed = stores_changed || follows_other || before.settings != after.settings ||
                         cfg_->catalogs.max_bytes != cfg->catalogs.max_bytes ||
                         cfg_->catalogs.time_limit != cfg->catalogs.time_limit ||
                         cfg_->catalogs.memory_limit != cfg->catalogs.memory_limit ||
                         cfg_->catalogs.scratch_dir != cfg->catalogs.scratch_dir;
    cfg_ = std::move(cfg); // the pass in hand holds its own copies of what it uses
    if (!changed)
        return false;
    reopen_stores_ = reopen_stores_ || stores_changed;
    if (stores_changed && lease_)
        lease_->reopen();
    if (stores_changed && attester_)
        attester_->forget();
    settings_changed_ = true;
    services_.log->info(name_, in_pass_ ? "configuration changed: applies from the next pass, which starts when "
                                          "this one ends"
                                        : "configuration changed: a pass starts now");
    force_full_recheck_ = true; // what the new settings allow may differ for published versions too
    wait_.cancel();
    return true;
}

repository_status repository_job::status() const {
    repository_status out{name_, {}, in_pass_, lease_ ? lease_->standing_by_for() : std::string(),
                          lease_ ? lease_->anomaly() : std::string()};
    out.state.last_success = state_.last_success;
    out.state.last_attempt = state_.last_attempt;
    out.state.consecutive_failures = state_.consecutive_failures;
    out.state.failing_since = state_.failing_since;
    out.state.paused = state_.paused;
    if (state_.paused)
        out.role = "paused";
    else if (!lease_ || !lease_->in_force())
        out.role = "alone";
    else if (lease_->mine())
        out.role = "holder";
    else
        out.role = out.standing_by.empty() ? "taking" : "standing_by";
    out.state.record = state_.record; // not the origin's cache: large, and not shown
    return out;
}

std::string repository_job::unready_reason(double now) const {
    if (state_.paused)
        return {}; // off on purpose: its alerts are silenced too
    if (state_.last_success > 0 || (lease_ && !lease_->standing_by_for().empty()))
        return {}; // it completed a pass once (this run or an earlier one), or another daemon mirrors it
    double const grace = std::chrono::duration<double>(repo().settings.pass_timeout).count();
    double const configured = state_.configured_since.value_or(configured_at_); // across restarts
    if (now - configured < grace)
        return {}; // its first pass may still be running
    std::string why = name_ + ": no pass completed in the " + std::to_string(static_cast<long long>(now - configured)) +
                      " s since it was configured";
    if (!state_.record.last_error.empty())
        why += "; last error: " + state_.record.last_error;
    return why;
}

void repository_job::retire() {
    retired_ = true;
    stop();
}

void repository_job::stop() {
    stopping_ = true;
    wait_.cancel();
    slot_wait_.emit(net::cancellation_type::all);
}

result<std::unique_ptr<store::store>> repository_job::open_store_at(std::string const& location,
                                                                   store::store_role role, char const* traffic,
                                                                   io::memory_budget* memory) {
    auto options = store_options_for(*cfg_, location, *services_.throttles);
    options.observer = services_.stats->request_observer(name_, traffic);
    options.memory = memory;
    return services_.open_store(location, role, services_.pool, options);
}

std::optional<error> repository_job::open_stores() {
    if (reopen_stores_) {
        close_stores();
        reopen_stores_ = false;
    }
    auto const& r = repo();
    if (!origin_) {
        auto opened = open_store_at(r.origin, store::store_role::origin, "origin", services_.memory);
        if (!opened)
            return make_error(job_errc::origin_unavailable, "origin: " + opened.error().message);
        origin_ = std::move(*opened);
        // An HTTP origin's remembered objects, kept in the state file, spare rereads.
        auto* memory = origin_->remembered();
        bool const restored = memory != nullptr && state_.origin == origin_->describe();
        if (restored)
            memory->restore(state_.origin_cache);
        services_.log->debug(name_, "origin opened: " + origin_->describe() +
                                        (restored ? " (" + std::to_string(state_.origin_cache.size()) +
                                                        " remembered object(s) restored)"
                                                  : std::string()));
    }
    return open_mirror();
}

std::optional<error> repository_job::open_mirror() {
    if (!mirror_) {
        auto opened = open_store_at(repo().mirror, store::store_role::mirror, "mirror", services_.memory);
        if (!opened)
            return make_error(job_errc::mirror_unavailable, "mirror: " + opened.error().message);
        mirror_ = lease_ ? lease_->fence(std::move(*opened)) : std::move(*opened);
    }
    return std::nullopt;
}

void repository_job::close_stores() {
    origin_.reset();
    mirror_.reset();
}

void repository_job::save_state() {
    if (services_.state == nullptr || retired_)
        return;
    if (auto* memory = origin_ ? origin_->remembered() : nullptr) {
        state_.origin = origin_->describe();
        state_.origin_cache = memory->remembered_objects();
    } else {
        state_.origin.clear();
        state_.origin_cache.clear();
    }
    if (auto saved = services_.state->save(name_, state_); !saved)
        services_.log->warning(name_, "state not saved (the next start reads more): " + saved.error().message);
}

bool repository_job::full_recheck_due(config::repository_settings const& settings, double now) const {
    auto const& last = state_.record.audits.last_full_recheck;
    double const interval = std::chrono::duration<double>(settings.recheck_interval).count();
    return force_full_recheck_ || interval <= 0 || !last || now - *last >= interval || now < *last;
}

namespace {

/// A pass slot, as an optional (what co_spawn can hand over whatever happened).
awaitable<std::optional<sync::transfer_slots::slot>> take_slot(sync::transfer_slots& slots) {
    co_return co_await slots.acquire();
}

} // namespace

awaitable<std::optional<sync::transfer_slots::slot>> repository_job::wait_for_pass_slot() {
    if (services_.passes == nullptr)
        co_return sync::transfer_slots::slot(); // no cap
    auto end = co_await io::run_cuttable(services_.executor, take_slot(*services_.passes), slot_wait_);
    if (stopping_ || !end.value || !*end.value)
        co_return std::nullopt; // a slot granted as the stop came goes back
    co_return std::move(*end.value);
}

awaitable<void> repository_job::loop() {
    while (!stopping_) {
        settings_changed_ = false;
        if (event_not_before_) {
            // An event within events.min_pass_gap of the last pass it asked for: its pass
            // waits for the gap's end (a trigger or a stop cuts the wait short).
            wait_.expires_at(*std::exchange(event_not_before_, std::nullopt));
            waiting_ = true;
            co_await wait_.async_wait(use_op);
            waiting_ = false;
            if (stopping_)
                break;
        }
        {
            // A pass and the audits after it hold one of the max_passes slots.
            auto slot = co_await wait_for_pass_slot();
            if (!slot)
                break;
            co_await one_pass();
            if (stopping_)
                break;
            if (!settings_changed_)
                co_await audits_if_due();
        }
        if (stopping_)
            break;
        if (settings_changed_)
            continue; // the configuration changed during the pass: apply it now
        // Chosen when the pass ended (status shows it); a pass that stood by or was cut chose none.
        auto wait = next_wait_.value_or(next_wait(poll_of(repo().settings), state_.consecutive_failures,
                                                  std::uniform_real_distribution<double>(0, 1)(random_)));
        next_wait_.reset();
        if (lease_) // idle until the next pass: no lease request in between
            co_await lease_->rest(wait);
        if (std::exchange(trigger_pending_, false))
            continue; // triggered while busy: the next pass now, backoff or not
        wait_.expires_after(wait);
        waiting_ = true;
        co_await wait_.async_wait(use_op); // cut short by stop(), reconfigure() and trigger()
        waiting_ = false;
    }
    if (lease_)
        co_await lease_->stop();
    close_stores();
}

awaitable<bool> repository_job::paused_now() {
    if (open_stores())
        co_return state_.paused.has_value(); // the pass reports why the mirror cannot be opened
    auto read = co_await coord::read_pause(*mirror_);
    if (!read)
        co_return state_.paused.has_value(); // unread: as last known (the pass reports the failure)
    if (*read != state_.paused) {
        if (*read)
            services_.log->warning(name_, "paused" + ((*read)->by.empty() ? std::string() : " by " + (*read)->by) +
                                              ((*read)->reason.empty() ? std::string() : ": " + (*read)->reason) +
                                              "; no pass runs until `fdl-mirror resume`");
        else
            services_.log->info(name_, "resumed: passes run again");
        state_.paused = *read;
        services_.stats->set_paused(name_, state_.paused.has_value());
        save_state();
    }
    co_return state_.paused.has_value();
}

awaitable<void> repository_job::one_pass() {
    last_pass_completed_ = false; // until this one does
    bool const paused = co_await paused_now(); // (named: GCC 12 and `if (co_await …)`)
    if (paused)
        co_return; // the operator's pause: no lease taken, nothing counted
    std::string lease_refused;
    if (lease_) {
        auto gate = co_await lease_->take(lease_refused);
        if (lease_->mirror_needs_rewrap())
            mirror_.reset(); // opened again in its fence (the origin, and its remembered objects, stay)
        if (gate == repository_lease::gate::go && lease_->newly_taken()) {
            attester_->forget(); // another holder may have attested meanwhile
            events_baseline_ = false; // the events of the time it was another's went there
            co_await continue_mirror_clocks();
        }
        if (gate == repository_lease::gate::go)
            co_await adopt_attestation();
        if (gate == repository_lease::gate::stand_by) {
            services_.stats->standing_by(name_); // the holder exports the repository's state
            // Ours by the assignment, but another daemon still holds the lease: it gives
            // it up at its next renewal, so look again then, not a whole interval later.
            if (services_.coord->spreads() && services_.coord->assigned(name_))
                next_wait_ = services_.coord->renew_every();
            co_return; // another daemon's to mirror: nothing to count
        }
    }
    if (!lease_ || !lease_->in_force())
        co_await adopt_attestation(); // a folder mirror: this daemon's alone
    auto const cfg = cfg_; // this pass's configuration, whatever a reload does meanwhile
    auto const& r = repo_of(*cfg, name_);
    double const started = record_now();
    state_.last_attempt = started;
    services_.stats->pass_started(name_, started);
    pass_by_event_ = std::exchange(event_asked_, false); // an event that comes from now on asks for the next pass
    if (pass_by_event_) {
        services_.stats->pass_by_event(name_);
        last_event_pass_ = std::chrono::steady_clock::now();
    }
    bool const full_recheck = full_recheck_due(r.settings, started);
    std::optional<pass_outcome> cut_outcome;
    auto report = co_await run_pass(*cfg, r, full_recheck, std::move(lease_refused), cut_outcome);
    if (!report || retired_)
        co_return; // cut by a lost lease or a shutdown, or removed from the configuration
    if (stopping_ && report->fatal && report->fatal->code == sync::sync_errc::stopped) {
        // A shutdown, not the repository's failure: nothing to count.
        services_.log->info(name_, "pass stopped for shutdown after publishing " +
                                       std::to_string(report->published.size()) + " version(s); the next start goes on");
        save_state();
        co_return;
    }
    account_pass(r, *report, cut_outcome, started, full_recheck);
    co_await keep_mirror_clocks();
    co_await attest_mirror(*cfg, r, *report, started);
}

awaitable<std::optional<sync::sync_report>> repository_job::run_pass(config::daemon_config const& cfg,
                                                                     config::repository_config const& r,
                                                                     bool full_recheck, std::string lease_refused,
                                                                     std::optional<pass_outcome>& cut_outcome) {
    sync::sync_report report;
    auto trust = load_trust(r);
    if (!trust) {
        report.fatal = trust.error();
        co_return report;
    }
    auto unopened = lease_refused.empty() ? open_stores() : make_error(job_errc::lease_refused, lease_refused);
    if (unopened) {
        // What could not be opened is down; the other side was not reached, and stays as seen.
        (unopened->code == job_errc::origin_unavailable ? report.origin_up : report.mirror_up) = false;
        report.fatal = std::move(unopened);
        report.io_failure = true; // exit 3, as for any pass that cannot reach its stores
        co_return report;
    }
    std::optional<mirror_lock> lock; // one writer per folder mirror, as for `sync`
    sync::sync_options options;
    options.allow_rewind = r.settings.allow_rewind;
    options.concurrency = r.settings.concurrency;
    options.refs = {r.settings.max_refs, r.settings.max_ref_name_length};
    options.before_first_write = folder_lock_step(r.mirror, lock);
    options.pool = services_.pool;
    options.trust = std::move(*trust);
    options.catalogs = catalog_settings_of(cfg);
    if (services_.catalog_readers != nullptr)
        options.catalogs.readers = *services_.catalog_readers;
    options.memory = services_.memory;
    options.shared_transfers = services_.transfers;
    options.stop_requested = [this] { return stopping_; };
    options.recheck_published = full_recheck; // else a quick pass: new versions and moved refs
    options.patient_with_unsettled_refs = true; // a next pass comes: no page for a write in flight
    for (auto const& text : r.include_refs)
        if (auto pattern = fdl::ref_pattern::parse(text))
            options.partial.follow.include.push_back(std::move(*pattern)); // check_named_files refused the others
    for (auto const& text : r.exclude_refs)
        if (auto pattern = fdl::ref_pattern::parse(text))
            options.partial.follow.exclude.push_back(std::move(*pattern));
    options.partial.head = r.head;
    options.partial.depth = r.depth;
    options.unsettled_before = unsettled_refs_;
    services_.log->debug(name_, full_recheck ? "pass started: full recheck of the published versions"
                                             : "pass started: quick (new versions and moved refs)");
    lease_lost_in_pass_ = false;
    auto finished = co_await run_cuttable(sync::run_sync(*origin_, *mirror_, std::move(options), nullptr),
                                          r.settings.pass_timeout);
    if (finished) {
        // A pass that ended before it read the refs saw nothing: what was unsettled stays so.
        if (!finished->fatal || !finished->unsettled_refs.empty())
            unsettled_refs_ = finished->unsettled_refs;
        co_return std::move(*finished);
    }
    // Cut (or, were it a bug, thrown): the engine's publish order kept the mirror
    // consistent; what was copied stays for the next pass.
    std::string why = cut_reason_.empty() ? "the pass stopped on an internal error" : cut_reason_;
    if (cut_reason_.empty() && cut_failure_) {
        try {
            std::rethrow_exception(cut_failure_);
        } catch (std::exception const& e) {
            why += std::string(": ") + e.what();
        } catch (...) {
            why += ": an exception that is not a std::exception";
        }
    }
    if (std::exchange(lease_lost_in_pass_, false) && !stopping_) {
        // Not the repository's failure: another daemon mirrors it now.
        services_.log->warning(name_, "pass cut: " + why);
        co_return std::nullopt;
    }
    if (stopping_) { // shutdown: not the repository's failure, nothing to count
        services_.log->warning(name_, "pass cut by shutdown; the next start goes on from here");
        co_return std::nullopt;
    }
    report.fatal = make_error(job_errc::pass_cut, "pass cut: " + why);
    cut_outcome = pass_outcome::timeout;
    co_return report;
}

void repository_job::remember_violations(sync::sync_report const& report, bool full_recheck) {
    if (report.fatal && report.violations.empty())
        return; // it stopped before it could see them: they stand as known
    // A quick pass does not re-examine the published versions: what a full recheck found
    // there stays known until the next full recheck no longer finds it.
    if (full_recheck)
        logged_violations_.clear();
    for (auto const& violation : report.violations)
        logged_violations_.insert(violation.message);
}

void repository_job::account_pass(config::repository_config const& r, sync::sync_report const& report,
                                  std::optional<pass_outcome> cut_outcome, double started, bool full_recheck) {
    double const ended = record_now();
    finished_pass pass;
    pass.outcome = cut_outcome.value_or(outcome_of(report));
    pass.finished_at = ended;
    pass.duration_seconds = ended - started;
    record_pass(state_.record, report, pass.outcome, ended, full_recheck);
    // A repository that takes events, whose origin changed with no event asking for this
    // pass: an event went missing (FdlMirrorEventsMissing). Its start is kept, not its end,
    // so that an event that came during the pass is not taken for a late one.
    // The first pass of a run (or of a new lease) is not counted: events sent while no
    // daemon held the repository are lost by design (RGW's topics do not queue them).
    if (r.events.any() && !pass_by_event_ && events_baseline_ &&
        (!report.published.empty() || !report.refs_updated.empty())) {
        state_.record.unannounced_change = started;
        services_.stats->change_unannounced(name_, started);
    }
    pass.ref_lag_seconds = ref_lags(state_.record, ended);
    services_.stats->pass_finished(name_, report, pass);
    services_.stats->set_clocks(name_, state_.record);
    log_pass(*services_.log, name_, report, pass, logged_violations_);
    remember_violations(report, full_recheck);
    last_pass_completed_ = pass.outcome == pass_outcome::ok || pass.outcome == pass_outcome::held;
    events_baseline_ = events_baseline_ || last_pass_completed_;
    if (last_pass_completed_) {
        state_.last_success = ended;
        state_.consecutive_failures = 0;
        state_.failing_since.reset();
        if (full_recheck) {
            state_.record.audits.last_full_recheck = started;
            force_full_recheck_ = false;
        }
        services_.stats->set_audits(name_, state_.record.audits);
    } else {
        state_.consecutive_failures += 1;
        if (!state_.failing_since)
            state_.failing_since = started;
        reopen_stores_ = true; // broken connections, expired credentials: start afresh (the cache is kept)
        if (lease_) // the lease's store too, unless it holds the lease
            lease_->forget_unless_held();
    }
    services_.stats->set_failing_since(name_, state_.failing_since);
    next_wait_ = next_wait(poll_of(r.settings), state_.consecutive_failures,
                           std::uniform_real_distribution<double>(0, 1)(random_));
    state_.record.next_pass = record_time(ended + std::chrono::duration<double>(*next_wait_).count());
    save_state();
}

} // namespace mirror::daemon
