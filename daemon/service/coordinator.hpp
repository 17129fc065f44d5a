#pragma once
// What the daemons sharing S3 mirrors agree on (docs/operations.md, "Running several
// instances"): this daemon's name and run, its heartbeats under `members`, and which
// repositories are its own to mirror. Each repository's lease (core/coord/lease) is kept
// by its job; this says which jobs should want theirs.

#include "config/daemon_config.hpp"
#include "core/io/net.hpp"
#include "core/store/store.hpp"
#include "daemon/common/log.hpp"
#include "daemon/metrics/metrics.hpp"

#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

namespace mirror::daemon {

class coordinator {
public:
    /// `settings.instance` empty: the host's name.
    coordinator(net::any_io_executor executor, config::coordination_settings settings, logger const& log,
                metrics& stats);
    ~coordinator();

    config::coordination_settings const& settings() const { return settings_; }
    std::string const& instance() const { return instance_; }
    /// "INSTANCE/LIFE": the holder named in leases; LIFE is new on every start.
    std::string const& holder() const { return holder_; }
    /// The least lease time left for a write to start: a quarter of the lease.
    std::chrono::milliseconds write_margin() const { return settings_.lease_duration / 4; }
    /// How often a held lease is renewed: a sixth of it, so that it always covers the margin.
    std::chrono::milliseconds renew_every() const { return settings_.lease_duration / 6; }

    /// The configured repositories (at start, and after a reload).
    void set_repositories(std::vector<std::string> names);
    /// Whether `repo` is this daemon's to mirror: always without `members`, else by the
    /// assignment over the live members last seen (this daemon always among them).
    bool assigned(std::string const& repo) const;
    /// The instance `repo` is assigned to, as last seen; "" when none is known (no members).
    std::string assignee(std::string const& repo) const;
    /// Whether the daemon `instance` is known to have stopped: the members were read within
    /// the last lease_duration and its heartbeat was not among the live ones. False without
    /// members, and while no fresh read says so (a daemon just started knows nothing yet).
    bool known_gone(std::string_view instance) const;

    /// Whether the repositories are spread among daemons by their heartbeats (a `members`
    /// location is in use), rather than every daemon wanting every lease.
    bool spreads() const { return members_ != nullptr; }
    /// Called with each repository that becomes this daemon's when the members change (a
    /// daemon left or joined), so that its job takes the lease at once rather than at its
    /// next poll.
    void on_gained(std::function<void(std::string const& repo)> gained) { gained_ = std::move(gained); }
    /// Starts the heartbeats into `members` (nothing to do without a members location).
    void start(std::unique_ptr<store::store> members);
    /// Stops the heartbeats and withdraws this daemon's, then calls `then`.
    void stop(std::function<void()> then);

private:
    awaitable<void> beat();
    void reassign();

    net::any_io_executor executor_;
    config::coordination_settings settings_;
    logger const& log_;
    metrics& stats_;
    std::string instance_, holder_;
    std::unique_ptr<store::store> members_;
    net::steady_timer timer_;
    bool stopping_ = false, beating_ = false;
    std::function<void()> after_stop_;
    std::vector<std::string> repositories_, live_;
    std::optional<std::chrono::steady_clock::time_point> members_read_; ///< the last read of the members
    std::map<std::string, std::string> owner_;
    std::function<void(std::string const&)> gained_;
};

} // namespace mirror::daemon
