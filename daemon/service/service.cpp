#include "daemon/service/service.hpp"

#include "daemon/build_info.hpp"
#include "daemon/cli/check_config.hpp"
#include "daemon/events/event_listener.hpp"
#include "daemon/service/coordinator.hpp"
#include "daemon/common/log.hpp"
#include "daemon/metrics/metrics.hpp"
#include "daemon/service/notify.hpp"
#include "daemon/service/on_call.hpp"
#include "daemon/service/pass_setup.hpp"
#include "daemon/service/repository_job.hpp"
#include "daemon/state/state_file.hpp"
#include "daemon/status/status_report.hpp"
#include "daemon/status/status_server.hpp"

#include "core/catalog/catalog_reader.hpp"
#include "core/catalog/sandbox.hpp"
#include "core/catalog/sandboxed_reader.hpp"
#include "core/io/blocking_pool.hpp"
#include "core/store/open_store.hpp"
#include "verify/sshsig.hpp"

#include <boost/asio/io_context.hpp>

#include <openssl/crypto.h>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <thread>
#include <unistd.h>
#include <variant>
#include <vector>

namespace mirror::daemon {

namespace {

using config_ptr = std::shared_ptr<config::daemon_config const>;

/// Loads and checks the configuration as check-config does; the problems, one per line,
/// when it is refused.
std::variant<config_ptr, std::vector<std::string>> load_checked(std::string const& path,
                                                                 std::optional<std::string> const& web_config_file) {
    auto loaded = config::load_config(path);
    std::vector<std::string> problems;
    if (!loaded) {
        for (auto const& problem : loaded.error())
            problems.push_back(problem.text());
        return problems;
    }
    if (web_config_file) // --web.config.file: over the file's web_config_file
        loaded->web_config_file = std::filesystem::absolute(*web_config_file).lexically_normal();
    for (auto const& problem : check_named_files(*loaded))
        problems.push_back(path + ": " + problem);
    if (!problems.empty())
        return problems;
    return std::make_shared<config::daemon_config const>(std::move(*loaded));
}

std::shared_ptr<sync::catalog_readers> make_catalog_readers(config::daemon_config const& cfg) {
    return std::make_shared<sync::catalog_readers>(cfg.catalogs.scratch_dir.value_or(std::filesystem::path()),
                                                   cfg.catalogs.readers);
}

double unix_seconds() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::vector<repository_info> infos_of(config::daemon_config const& cfg) {
    std::vector<repository_info> out;
    for (auto const& repo : cfg.repositories)
        out.push_back({repo.name, std::chrono::duration<double>(repo.settings.interval).count(),
                       std::chrono::duration<double>(repo.settings.scrub_period).count()});
    return out;
}

/// $WATCHDOG_USEC when systemd asks this process for keep-alives.
std::optional<std::chrono::microseconds> watchdog_period() {
    char const* usec = std::getenv("WATCHDOG_USEC");
    if (usec == nullptr)
        return std::nullopt;
    if (char const* pid = std::getenv("WATCHDOG_PID"); pid != nullptr && std::atol(pid) != static_cast<long>(getpid()))
        return std::nullopt; // meant for another process
    auto n = std::strtoull(usec, nullptr, 10);
    if (n == 0)
        return std::nullopt;
    return std::chrono::microseconds(n);
}

/// The daemon, once its configuration is loaded and its state folder open.
class service {
public:
    service(config_ptr cfg, state_dir state, std::optional<std::string> web_config_override)
        : web_config_override_(std::move(web_config_override)), cfg_(std::move(cfg)), log_(cfg_->log), state_(std::move(state)),
          pool_(config::blocking_threads(*cfg_)), memory_(config::transfer_memory(*cfg_)),
          catalog_readers_(make_catalog_readers(*cfg_)),
          stats_(build_facts{FDL_MIRROR_VERSION, verify::libssh_version(), catalog::reader_available(),
                             OpenSSL_version(OPENSSL_VERSION_STRING)}),
          transfers_(std::make_shared<sync::transfer_slots>(cfg_->max_transfers)),
          passes_(std::make_unique<sync::transfer_slots>(cfg_->max_passes)), notify_(notifier::from_environment()),
          signals_(io_, SIGTERM, SIGINT, SIGHUP), watchdog_(io_), grace_(io_),
          coord_(io_.get_executor(), cfg_->coordination, log_, stats_) {}

    int run() {
        status_sources sources{[this] {
                                   stats_.set_passes(passes_->in_use(), passes_->waiting(), cfg_->max_passes);
                                   stats_.set_transfer_memory(memory_.capacity(), memory_.in_use(), memory_.peak(),
                                                              memory_.waiting());
                                   auto const catalogs = sync::catalog_readers::process_counts();
                                   stats_.set_catalog_reads(catalogs.catalogs, catalogs.batches);
                                   auto const readers = catalog::sandboxed_reader::process_failures();
                                   stats_.set_catalog_readers({readers.crashed, readers.limited, readers.started});
                                   return stats_.text();
                               },
                               [this] { return not_ready(); },
                               [this] { return status_json(); },
                               [this](std::optional<std::string> repository) { return trigger(std::move(repository)); }};
        auto security = make_web_security();
        if (!security)
            return exit_config;
        auto bound = status_server::bind(io_.get_executor(), cfg_->listen, std::move(sources), security);
        if (!bound) {
            log_.error({}, "cannot listen on " + config::to_string(cfg_->listen) + ": " + bound.error().message);
            return exit_unavailable;
        }
        server_ = std::move(*bound);
        server_->start();
        log_.info({}, "listening on " + cfg_->listen.host + ":" + std::to_string(server_->port()) +
                          " (/metrics, /status, /healthz, /readyz; " + endpoint_security(*cfg_) + ")");
        if (catalog::reader_available()) { // what its catalog readers get here (docs/design.md)
            auto sandbox = catalog::describe_catalog_sandbox();
            if (sandbox.starts_with("namespaces"))
                log_.info({}, "catalog sandbox: " + sandbox);
            else
                log_.warning({}, "catalog sandbox: " + sandbox);
        }
        if (cfg_->events) {
            events_ = std::make_unique<event_listener>(stats_, log_, [this](std::string const& repo,
                                                                             std::string const& source) {
                if (auto it = jobs_.find(repo); it != jobs_.end())
                    it->second->event_arrived(source);
            });
            if (auto why = events_->start(io_.get_executor(), *cfg_, security)) {
                log_.error({}, *why);
                return exit_unavailable;
            }
        }
        stats_.set_repositories(infos_of(*cfg_));
        if (!start_coordination())
            return exit_unavailable;
        for (auto const& repo : cfg_->repositories)
            start_job(repo.name);
        wait_for_signal();
        ready_ = true;
        tell_systemd("READY=1\nSTATUS=" + status_text());
        start_watchdog();
        log_.info({}, "fdl-mirror " FDL_MIRROR_VERSION " running: " + status_text());
        io_.run();
        log_.info({}, "stopped");
        return 0;
    }

private:
    /// The endpoints' TLS and authentication, or null (logged) when the web configuration
    /// no longer loads (it did when the configuration was checked a moment ago).
    std::shared_ptr<web_security> make_web_security() {
        auto log = [this](bool error, std::string const& message) {
            error ? log_.error({}, message) : log_.info({}, message);
        };
        std::shared_ptr<web_settings const> settings;
        if (cfg_->web_config_file) {
            auto loaded = load_web_settings(*cfg_->web_config_file);
            if (auto const* problems = std::get_if<std::vector<std::string>>(&loaded)) {
                for (auto const& problem : *problems)
                    log_.error({}, "web_config_file: " + problem);
                return nullptr;
            }
            settings = std::get<0>(std::move(loaded));
        }
        web_security_ = std::make_shared<web_security>(cfg_->web_config_file, std::move(settings), log);
        return web_security_;
    }

    /// A reload naming another web configuration (or none): the next connections use it.
    void use_web_config(config::daemon_config const& next) {
        std::shared_ptr<web_settings const> settings;
        if (next.web_config_file) {
            auto loaded = load_web_settings(*next.web_config_file);
            if (auto const* problems = std::get_if<std::vector<std::string>>(&loaded)) {
                for (auto const& problem : *problems) // changed since the check: the old one stays
                    log_.error({}, "web_config_file: not taken: " + problem);
                return;
            }
            settings = std::get<0>(std::move(loaded));
        }
        web_security_->use(next.web_config_file, std::move(settings));
        log_.info({}, "web_config_file: now " + (next.web_config_file ? next.web_config_file->string() : "none") +
                          " (" + endpoint_security(next) + ")");
    }

    job_services services() {
        return job_services{io_.get_executor(), &pool_, &stats_, &log_, &state_, transfers_, passes_.get(),
                            &throttles_, &coord_, &memory_, &catalog_readers_};
    }

    std::vector<std::string> names_of(config::daemon_config const& cfg) const {
        std::vector<std::string> names;
        for (auto const& repo : cfg.repositories)
            names.push_back(repo.name);
        return names;
    }

    /// The heartbeats, when the daemons share a members location. False when it cannot be
    /// opened (a configuration the checks let through, such as credentials that are gone).
    bool start_coordination() {
        auto const& settings = cfg_->coordination;
        coord_.set_repositories(names_of(*cfg_));
        log_.info({}, "coordination: " + std::string(config::to_string(settings.mode)) + ", as '" + coord_.instance() +
                          "' (lease " + std::to_string(settings.lease_duration.count() / 1000) + " s)" +
                          (settings.members ? ", sharing the repositories with the daemons under " + *settings.members
                                            : std::string()));
        if (!settings.members)
            return true;
        auto options = store_options_for(*cfg_, *settings.members, throttles_);
        auto opened = store::open_store(*settings.members, store::store_role::mirror, &pool_, options);
        if (!opened) {
            log_.error({}, "coordination: members: " + opened.error().message);
            return false;
        }
        coord_.on_gained([this](std::string const& repo) {
            if (auto job = jobs_.find(repo); job != jobs_.end())
                job->second->poll_now("the repository is now this daemon's to mirror");
        });
        coord_.start(std::move(*opened));
        return true;
    }

    /// What /readyz says (docs/operations.md, "Health and readiness"): "" once started and
    /// while every repository has completed a pass or is within its grace.
    std::string not_ready() const {
        if (!ready_)
            return stopping_ ? "stopping" : "starting";
        double const now = unix_seconds();
        std::string out;
        for (auto const& [name, job] : jobs_)
            if (auto why = job->unready_reason(now); !why.empty())
                out += (out.empty() ? "" : "\n") + why;
        return out;
    }

    /// POST /trigger: a pass now of `repository`, or of every one (daemon/service/on_call.hpp).
    awaitable<control_answer> trigger(std::optional<std::string> repository) {
        if (!ready_ || stopping_)
            co_return refused_control(503, stopping_ ? "the daemon is stopping" : "the daemon is starting");
        std::vector<std::string> names;
        for (auto const& repo : cfg_->repositories)
            if (!repository || repo.name == *repository)
                names.push_back(repo.name);
        if (names.empty())
            co_return refused_control(404, "no repository '" + repository.value_or("") + "' is configured");
        log_.info({}, "trigger: a pass now of " + (repository ? *repository : std::string("every repository")));
        co_return co_await trigger_passes(std::move(names), [this](std::string const& name) -> repository_job* {
            auto job = jobs_.find(name);
            return job == jobs_.end() ? nullptr : job->second.get();
        }, std::chrono::seconds(5));
    }

    /// What /status says: the configured repositories, in order, as their jobs know them.
    std::string status_json() const {
        std::vector<repository_status> all;
        for (auto const& repo : cfg_->repositories)
            if (auto job = jobs_.find(repo.name); job != jobs_.end())
                all.push_back(job->second->status());
        return daemon::status_json(all, unix_seconds(), "daemon", last_reload_);
    }

    std::string status_text() const {
        return std::to_string(jobs_.size()) + " repositor" + (jobs_.size() == 1 ? "y" : "ies");
    }

    void tell_systemd(std::string const& state) {
        std::string problem;
        if (!notify_.send(state, &problem) && !notify_warned_) {
            notify_warned_ = true; // once: the journal need not fill with it
            log_.warning({}, "cannot notify systemd: " + problem);
        }
    }

    void start_job(std::string const& name) {
        if (retiring_.contains(name))
            return; // its old job still runs a pass: started when it ends (job_ended)
        auto job = std::make_unique<repository_job>(services(), cfg_, name);
        auto* raw = job.get();
        jobs_[name] = std::move(job);
        raw->start([this, raw] { job_ended(raw); });
    }

    /// A job's loop has ended: forget it (after its handler returns), then start the
    /// repository anew if a reload brought it back meanwhile, or finish stopping. A job
    /// that ended on an internal error stays ended (restarting it could spin); its
    /// repository's passes stop, which FdlMirrorStale reports.
    void job_ended(repository_job* job) {
        net::post(io_, [this, job] {
            std::string const name = job->name();
            bool was_retiring = false;
            if (auto it = retiring_.find(name); it != retiring_.end() && it->second.get() == job) {
                retiring_.erase(it);
                was_retiring = true;
            } else if (auto j = jobs_.find(name); j != jobs_.end() && j->second.get() == job) {
                jobs_.erase(j);
            }
            if (stopping_) {
                if (jobs_.empty() && retiring_.empty())
                    finish_stopping();
                return;
            }
            bool const configured = std::any_of(cfg_->repositories.begin(), cfg_->repositories.end(),
                                                [&](auto const& r) { return r.name == name; });
            if (was_retiring && configured && !jobs_.contains(name))
                start_job(name);
        });
    }

    void wait_for_signal() {
        signals_.async_wait([this](boost::system::error_code ec, int signal) {
            if (ec)
                return;
            if (signal == SIGHUP)
                reload();
            else
                stop(signal == SIGTERM ? "SIGTERM" : "SIGINT");
            if (!finished_)
                wait_for_signal();
        });
    }

    void start_watchdog() {
        auto period = watchdog_period();
        if (!period || !notify_.enabled())
            return;
        // Twice per period, from the event loop: a stuck loop stops the keep-alives.
        watchdog_every_ = std::max(*period / 2, std::chrono::microseconds(1000));
        tell_systemd("WATCHDOG=1");
        arm_watchdog();
    }

    void arm_watchdog() {
        watchdog_.expires_after(watchdog_every_);
        watchdog_.async_wait([this](boost::system::error_code ec) {
            if (ec || finished_)
                return;
            tell_systemd("WATCHDOG=1");
            arm_watchdog();
        });
    }

    void reload() {
        if (stopping_)
            return;
        tell_systemd(notifier::reloading_message());
        log_.info({}, "reloading " + cfg_->file.string());
        auto loaded = load_checked(cfg_->file.string(), web_config_override_);
        if (auto const* problems = std::get_if<std::vector<std::string>>(&loaded)) {
            for (auto const& problem : *problems)
                log_.error({}, "reload refused, the running configuration stays: " + problem);
            stats_.reload_finished(false, unix_seconds());
            last_reload_ = reload_summary{unix_seconds(), false, *problems};
            tell_systemd("READY=1\nSTATUS=reload refused; " + status_text());
            return;
        }
        apply(std::get<config_ptr>(loaded));
        stats_.reload_finished(true, unix_seconds());
        last_reload_ = reload_summary{unix_seconds(), true, {}};
        tell_systemd("READY=1\nSTATUS=" + status_text());
    }

    /// Takes a new configuration: repositories added start, removed ones stop (their pass
    /// cut), changed ones take it after their pass in hand; the others are not disturbed.
    void apply(config_ptr next) {
        if (config::to_string(next->listen) != config::to_string(cfg_->listen))
            log_.warning({}, "listen: the new address takes effect at the next start");
        if (next->state_dir != cfg_->state_dir)
            log_.warning({}, "state_dir: the new folder takes effect at the next start");
        if (next->web_config_file != cfg_->web_config_file)
            use_web_config(*next);
        if (events_)
            events_->reconfigure(*next);
        else if (next->events)
            log_.warning({}, "events: the new listener takes effect at the next start");
        log_.set(next->log);
        transfers_->resize(next->max_transfers);
        passes_->resize(next->max_passes);
        memory_.resize(config::transfer_memory(*next));
        if (next->catalogs.scratch_dir != cfg_->catalogs.scratch_dir || next->catalogs.readers != cfg_->catalogs.readers)
            catalog_readers_ = make_catalog_readers(*next); // passes in hand keep the old ones
        if (config::blocking_threads(*next) != pool_threads_)
            log_.warning({}, "threads: the new count takes effect at the next start");
        throttles_.keep_only(*next);
        std::string added, removed, changed;
        auto note = [](std::string& list, std::string const& name) { list += (list.empty() ? "" : ", ") + name; };
        for (auto it = jobs_.begin(); it != jobs_.end();) {
            bool const kept = std::any_of(next->repositories.begin(), next->repositories.end(),
                                          [&](auto const& r) { return r.name == it->first; });
            if (kept) {
                ++it;
                continue;
            }
            note(removed, it->first);
            it->second->retire();
            it->second->cancel_pass("the repository was removed from the configuration");
            state_.forget(it->first);
            retiring_[it->first] = std::move(it->second);
            it = jobs_.erase(it);
        }
        auto previous = std::move(cfg_);
        cfg_ = next;
        stats_.set_repositories(infos_of(*cfg_));
        coord_.set_repositories(names_of(*cfg_));
        if (previous->coordination != cfg_->coordination)
            log_.warning({}, "coordination: the new settings take effect at the next start");
        for (auto const& repo : cfg_->repositories) {
            if (auto it = jobs_.find(repo.name); it != jobs_.end()) {
                bool const was_changed = it->second->reconfigure(cfg_);
                if (was_changed)
                    note(changed, repo.name);
            } else {
                note(added, repo.name);
                start_job(repo.name);
            }
        }
        log_.info({}, "configuration reloaded: " + status_text() + (added.empty() ? "" : "; added " + added) +
                          (removed.empty() ? "" : "; removed " + removed) +
                          (changed.empty() ? "" : "; changed " + changed));
    }

    /// Starts no more passes; the passes in hand start no more copies (stop_requested), and
    /// those in flight may end within shutdown_timeout, after which they are cut. A second
    /// signal cuts them at once.
    void stop(char const* why) {
        if (stopping_) {
            log_.warning({}, std::string(why) + " again: cutting the passes in hand now");
            cut_all("a second stop signal");
            return;
        }
        stopping_ = true;
        ready_ = false;
        tell_systemd("STOPPING=1");
        std::size_t in_pass = 0;
        for (auto const& [name, job] : jobs_)
            in_pass += job->in_pass() ? 1 : 0;
        auto const grace = std::chrono::duration_cast<std::chrono::seconds>(cfg_->shutdown_timeout).count();
        log_.info({}, std::string(why) + ": stopping; passes in hand: " + std::to_string(in_pass) +
                          " (they start no new copy; copies in flight have up to " + std::to_string(grace) +
                          " s to end)");
        for (auto const& [name, job] : jobs_)
            job->stop();
        if (jobs_.empty() && retiring_.empty()) {
            finish_stopping();
            return;
        }
        grace_.expires_after(cfg_->shutdown_timeout);
        grace_.async_wait([this](boost::system::error_code ec) {
            if (ec)
                return;
            log_.warning({}, "shutdown_timeout passed: cutting the passes in hand");
            cut_all("shutdown_timeout passed");
            // A pass ends at its next operation once cut; one blocked in a catalog read
            // ends when the read does. Past this, exit anyway: the mirror is consistent at
            // every instant, so what is lost is work, not correctness.
            grace_.expires_after(std::chrono::seconds(10));
            grace_.async_wait([this](boost::system::error_code ec2) {
                if (ec2)
                    return;
                log_.error({}, "passes did not end 10 s after being cut; exiting anyway");
                std::fflush(stderr);
                std::_Exit(0);
            });
        });
    }

    void cut_all(std::string const& why) {
        for (auto const& [name, job] : jobs_)
            job->cancel_pass(why);
        for (auto const& [name, job] : retiring_)
            job->cancel_pass(why);
    }

    void finish_stopping() {
        if (!coordination_stopped_) { // withdraw the heartbeat first: the others take over at once
            coordination_stopped_ = true;
            coord_.stop([this] { finish_stopping(); });
            return;
        }
        finished_ = true;
        grace_.cancel();
        watchdog_.cancel();
        boost::system::error_code ignored;
        signals_.cancel(ignored);
        if (server_)
            server_->stop();
        if (events_)
            events_->stop();
        io_.stop();
    }

    // Declared in the order they must be built; destroyed in reverse: jobs (and their
    // stores) before the pool and the io_context they use.
    std::optional<std::string> web_config_override_; ///< --web.config.file, kept across reloads
    config_ptr cfg_;
    logger log_;
    state_dir state_;
    net::io_context io_{1};
    io::blocking_pool pool_;
    std::size_t pool_threads_ = config::blocking_threads(*cfg_);
    io::memory_budget memory_; ///< outlives the jobs and their stores (declared before them)
    std::shared_ptr<sync::catalog_readers> catalog_readers_;
    metrics stats_;
    std::shared_ptr<sync::transfer_slots> transfers_;
    std::unique_ptr<sync::transfer_slots> passes_; ///< max_passes; outlives the jobs (declared before them)
    throttle_registry throttles_;
    notifier notify_;
    bool notify_warned_ = false;
    std::shared_ptr<web_security> web_security_;
    std::unique_ptr<status_server> server_;
    std::unique_ptr<event_listener> events_; ///< when the configuration has events:
    net::signal_set signals_;
    net::steady_timer watchdog_;
    std::chrono::microseconds watchdog_every_{0};
    net::steady_timer grace_;
    coordinator coord_; ///< before the jobs, which use it
    bool coordination_stopped_ = false;
    std::map<std::string, std::unique_ptr<repository_job>> jobs_;
    std::map<std::string, std::unique_ptr<repository_job>> retiring_; ///< removed, their pass being cut
    std::optional<reload_summary> last_reload_; ///< what /status says of the last SIGHUP
    bool ready_ = false;
    bool stopping_ = false;
    bool finished_ = false;
};

} // namespace

int run_service(std::string const& config_path, std::optional<std::string> const& web_config_file) {
    auto loaded = load_checked(config_path, web_config_file);
    if (auto const* problems = std::get_if<std::vector<std::string>>(&loaded)) {
        for (auto const& problem : *problems)
            std::fprintf(stderr, "%s\n", problem.c_str());
        std::fprintf(stderr, "fdl-mirror: %s: %zu problem%s; not started\n", config_path.c_str(), problems->size(),
                     problems->size() == 1 ? "" : "s");
        return exit_config;
    }
    auto cfg = std::get<config_ptr>(std::move(loaded));
    auto state = state_dir::open(cfg->state_dir);
    if (!state) {
        logger(cfg->log).error({}, "state_dir: " + state.error().message);
        return exit_cannot_create;
    }
    // A peer that closes a connection must not kill the process.
    std::signal(SIGPIPE, SIG_IGN);
    service daemon(std::move(cfg), std::move(*state), web_config_file);
    return daemon.run();
}

} // namespace mirror::daemon
