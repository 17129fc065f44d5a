#include "daemon/repository_job.hpp"

#include "daemon/mirror_lock.hpp"
#include "daemon/pass_log.hpp"

#include "core/store/errors.hpp"
#include "core/store/http_store.hpp"
#include "core/store/open_store.hpp"
#include "core/store/throttled_store.hpp"
#include "core/sync/errors.hpp"
#include "core/sync/sync_pass.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include <chrono>
#include <stdexcept>
#include <optional>

namespace mirror::daemon {

namespace {

double unix_now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

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

/// False when the pass could not read the origin at all: it stopped before knowing any
/// ref, on a failure of the origin's medium.
bool origin_reached(sync::sync_report const& report) {
    if (!report.refs.empty() || !report.fatal)
        return true;
    return !(sync::is_io_failure(report.fatal->code) && report.fatal->message.starts_with("origin"));
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
      random_(std::random_device{}()) {}

repository_job::~repository_job() = default;

config::repository_config const& repository_job::repo() const { return repo_of(*cfg_, name_); }

void repository_job::start(std::function<void()> on_finished) {
    on_finished_ = std::move(on_finished);
    if (services_.state != nullptr) {
        std::string warning;
        state_ = services_.state->load(name_, &warning);
        if (!warning.empty())
            services_.log->warning(name_, "state forgotten: " + warning);
        services_.stats->restore_times(name_, state_.last_success, state_.last_attempt);
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
    bool const changed = stores_changed || before.settings != after.settings ||
                         cfg_->catalogs.max_bytes != cfg->catalogs.max_bytes ||
                         cfg_->catalogs.time_limit != cfg->catalogs.time_limit ||
                         cfg_->catalogs.memory_limit != cfg->catalogs.memory_limit ||
                         cfg_->catalogs.scratch_dir != cfg->catalogs.scratch_dir;
    cfg_ = std::move(cfg); // the pass in hand holds its own copies of what it uses
    if (!changed)
        return false;
    reopen_stores_ = reopen_stores_ || stores_changed;
    settings_changed_ = true;
    services_.log->info(name_, in_pass_ ? "configuration changed: applies from the next pass, which starts when "
                                          "this one ends"
                                        : "configuration changed: a pass starts now");
    wait_.cancel();
    return true;
}

void repository_job::retire() {
    retired_ = true;
    stop();
}

void repository_job::stop() {
    stopping_ = true;
    wait_.cancel();
}

void repository_job::cancel_pass(std::string why) {
    if (!in_pass_)
        return;
    cut_reason_ = std::move(why);
    cut_.emit(net::cancellation_type::terminal);
}

bool repository_job::open_stores(std::string& problem) {
    if (reopen_stores_) {
        close_stores();
        reopen_stores_ = false;
    }
    auto const& r = repo();
    if (!origin_) {
        // Opened without its limits, which wrap it below, so that an HTTP origin's cache
        // stays reachable for the state file.
        auto options = store_options_for(*cfg_, r.origin, *services_.throttles);
        auto limits = std::move(options.limits);
        options.observer = services_.stats->request_observer(name_, "origin");
        auto opened = store::open_store(r.origin, store::store_role::origin, services_.pool, options);
        if (!opened) {
            problem = "origin: " + opened.error().message;
            return false;
        }
        origin_http_ = dynamic_cast<store::http_store*>(opened->get());
        if (origin_http_ != nullptr && state_.origin == origin_http_->describe())
            origin_http_->restore(state_.origin_cache);
        origin_ = store::throttled(std::move(*opened), std::move(limits));
    }
    if (!mirror_) {
        auto options = store_options_for(*cfg_, r.mirror, *services_.throttles);
        options.observer = services_.stats->request_observer(name_, "mirror");
        auto opened = store::open_store(r.mirror, store::store_role::mirror, services_.pool, options);
        if (!opened) {
            problem = "mirror: " + opened.error().message;
            return false;
        }
        mirror_ = std::move(*opened);
    }
    return true;
}

void repository_job::close_stores() {
    origin_http_ = nullptr;
    origin_.reset();
    mirror_.reset();
}

void repository_job::save_state() {
    if (services_.state == nullptr || retired_)
        return;
    if (origin_http_ != nullptr) {
        state_.origin = origin_http_->describe();
        state_.origin_cache = origin_http_->remembered_objects();
    } else {
        state_.origin.clear();
        state_.origin_cache.clear();
    }
    if (auto saved = services_.state->save(name_, state_); !saved)
        services_.log->warning(name_, "state not saved (the next start reads more): " + saved.error().message);
}

awaitable<void> repository_job::loop() {
    while (!stopping_) {
        settings_changed_ = false;
        co_await one_pass();
        if (stopping_)
            break;
        if (settings_changed_)
            continue; // the configuration changed during the pass: apply it now
        auto wait = next_wait(poll_of(repo().settings), state_.consecutive_failures,
                              std::uniform_real_distribution<double>(0, 1)(random_));
        wait_.expires_after(wait);
        co_await wait_.async_wait(use_op); // cut short by stop() and reconfigure()
    }
    close_stores();
}

awaitable<void> repository_job::one_pass() {
    auto const cfg = cfg_; // this pass's configuration, whatever a reload does meanwhile
    auto const& r = repo_of(*cfg, name_);
    double const started = unix_now();
    state_.last_attempt = started;
    services_.stats->pass_started(name_, started);

    sync::sync_report report;
    std::optional<pass_outcome> cut_outcome;
    std::string problem;
    auto trust = load_trust(r);
    std::optional<mirror_lock> lock; // one writer per folder mirror, as for `sync`
    if (!trust) {
        report.fatal = trust.error();
    } else if (!open_stores(problem)) {
        report.fatal = make_error(store::store_errc::io_error, problem);
        report.io_failure = true;
    } else {
        sync::sync_options options;
        options.allow_rewind = r.settings.allow_rewind;
        options.concurrency = r.settings.concurrency;
        options.refs = {r.settings.max_refs, r.settings.max_ref_name_length};
        options.before_first_write = folder_lock_step(r.mirror, lock);
        options.pool = services_.pool;
        options.trust = std::move(*trust);
        options.catalogs = catalog_settings_of(*cfg);
        options.shared_transfers = services_.transfers;
        options.stop_requested = [this] { return stopping_; };

        // The pass runs as its own coroutine, so that a deadline or a shutdown can cut it
        // (cancellation ends it at its next operation); this one waits for it to end.
        in_pass_ = true;
        cut_reason_.clear();
        std::optional<sync::sync_report> finished;
        std::exception_ptr failure;
        bool done = false;
        net::steady_timer until_done(services_.executor, net::steady_timer::time_point::max());
        net::steady_timer deadline(services_.executor, r.settings.pass_timeout);
        deadline.async_wait([this](boost::system::error_code ec) {
            if (!ec)
                cancel_pass("the pass passed its pass_timeout");
        });
        auto on_end = [&](std::exception_ptr e, sync::sync_report out) {
            failure = e;
            if (!e)
                finished = std::move(out);
            done = true;
            until_done.cancel();
        };
        net::co_spawn(services_.executor, sync::run_sync(*origin_, *mirror_, std::move(options), nullptr),
                      net::bind_cancellation_slot(cut_.slot(), on_end));
        while (!done)
            co_await until_done.async_wait(use_op);
        deadline.cancel();
        cut_.slot().clear();
        in_pass_ = false;
        if (finished) {
            report = std::move(*finished);
        } else {
            // Cut (or, were it a bug, thrown): the engine's publish order kept the mirror
            // consistent; what was copied stays for the next pass.
            std::string why = cut_reason_.empty() ? "the pass stopped on an internal error" : cut_reason_;
            if (cut_reason_.empty()) {
                try {
                    std::rethrow_exception(failure);
                } catch (std::exception const& e) {
                    why += std::string(": ") + e.what();
                } catch (...) {
                    why += ": an exception that is not a std::exception";
                }
            }
            report.fatal = make_error(store::store_errc::io_error, "pass cut: " + why);
            cut_outcome = stopping_ ? std::nullopt : std::optional(pass_outcome::timeout);
            if (stopping_) { // shutdown: not the repository's failure, nothing to count
                services_.log->warning(name_, "pass cut by shutdown; the next start goes on from here");
                co_return;
            }
        }
    }

    if (retired_)
        co_return; // removed from the configuration: its series are gone
    if (stopping_ && report.fatal && report.fatal->code == sync::sync_errc::stopped) {
        // A shutdown, not the repository's failure: nothing to count.
        services_.log->info(name_, "pass stopped for shutdown after publishing " +
                                       std::to_string(report.published.size()) + " version(s); the next start goes on");
        save_state();
        co_return;
    }
    double const ended = unix_now();
    finished_pass pass;
    pass.outcome = cut_outcome.value_or(outcome_of(report));
    pass.finished_at = ended;
    pass.duration_seconds = ended - started;
    pass.origin_reached = origin_reached(report);
    pass.ref_lag_seconds = lags_.update(report.refs, ended);
    services_.stats->pass_finished(name_, report, pass);
    log_pass(*services_.log, name_, report, pass);
    if (pass.outcome == pass_outcome::ok || pass.outcome == pass_outcome::held) {
        state_.last_success = ended;
        state_.consecutive_failures = 0;
    } else {
        state_.consecutive_failures += 1;
        reopen_stores_ = true; // broken connections, expired credentials: start afresh (the cache is kept)
    }
    save_state();
}

} // namespace mirror::daemon
