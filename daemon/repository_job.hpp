#pragma once
// One configured repository in the daemon: its stores, and the loop that runs a pass,
// reports it (log, metrics, state), and waits for the next. Never two passes of the same
// repository at once: the loop is the only thing that starts one.

#include "config/daemon_config.hpp"
#include "core/net.hpp"
#include "core/store/blocking_pool.hpp"
#include "core/sync/transfer_slots.hpp"
#include "daemon/log.hpp"
#include "daemon/metrics.hpp"
#include "daemon/pass_setup.hpp"
#include "daemon/schedule.hpp"
#include "daemon/state_file.hpp"

#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>

#include <functional>
#include <memory>
#include <random>
#include <string>

namespace mirror::store {
class http_store;
class store;
} // namespace mirror::store

namespace mirror::daemon {

/// What every job shares; owned by the service, which outlives its jobs.
struct job_services {
    net::any_io_executor executor;
    store::blocking_pool* pool = nullptr;
    metrics* stats = nullptr;
    logger const* log = nullptr;
    state_dir const* state = nullptr;
    std::shared_ptr<sync::transfer_slots> transfers;
    throttle_registry* throttles = nullptr;
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
    /// Cuts the pass in hand, if any: it ends at its next operation, leaving the mirror
    /// consistent (nothing is published that was not verified), and is not counted as a
    /// failure. `why` is logged.
    void cancel_pass(std::string why);
    bool in_pass() const { return in_pass_; }

private:
    awaitable<void> loop();
    awaitable<void> one_pass();
    /// Opens the stores when they are not open; false (and logs why) when one cannot be.
    bool open_stores(std::string& problem);
    void close_stores();
    void save_state();
    config::repository_config const& repo() const;

    job_services services_;
    std::shared_ptr<config::daemon_config const> cfg_;
    std::string name_;
    std::function<void()> on_finished_;

    std::unique_ptr<store::store> origin_;
    std::unique_ptr<store::store> mirror_;
    store::http_store* origin_http_ = nullptr; ///< inside origin_, when it is HTTP: its cache is kept
    bool reopen_stores_ = false;

    net::steady_timer wait_;
    net::cancellation_signal cut_; ///< cuts the pass in hand
    std::string cut_reason_;
    bool stopping_ = false;
    bool retired_ = false;
    bool in_pass_ = false;
    bool settings_changed_ = false; ///< run the next pass at once

    repository_state state_;
    lag_tracker lags_;
    std::mt19937_64 random_;
};

} // namespace mirror::daemon
