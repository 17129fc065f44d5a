#include "daemon/service/coordinator.hpp"

#include <algorithm>

#include "core/coord/assignment.hpp"
#include "core/coord/membership.hpp"

#include <boost/asio/co_spawn.hpp>

#include <random>
#include <unistd.h>

namespace mirror::daemon {

namespace {

std::string host_name() {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0')
        return "localhost";
    return name;
}

std::string life_nonce() {
    std::random_device seed;
    std::uint64_t n = (std::uint64_t{seed()} << 32) ^ seed();
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(n));
    return text;
}

std::int64_t wall_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

} // namespace

coordinator::coordinator(net::any_io_executor executor, config::coordination_settings settings, logger const& log,
                         metrics& stats)
    : executor_(std::move(executor)), settings_(std::move(settings)), log_(log), stats_(stats),
      instance_(settings_.instance.empty() ? host_name() : settings_.instance),
      holder_(instance_ + "/" + life_nonce()), timer_(executor_), live_{instance_} {
    stats_.set_members(1);
}

coordinator::~coordinator() = default;

void coordinator::set_repositories(std::vector<std::string> names) {
    repositories_ = std::move(names);
    reassign();
}

void coordinator::reassign() {
    auto const before = owner_;
    owner_ = coord::assign(repositories_, live_);
    if (!gained_ || !members_)
        return;
    for (auto const& [repo, owner] : owner_) {
        auto was = before.find(repo);
        if (owner == instance_ && was != before.end() && was->second != instance_)
            gained_(repo);
    }
}

bool coordinator::assigned(std::string const& repo) const {
    if (!members_)
        return true;
    auto it = owner_.find(repo);
    return it == owner_.end() || it->second == instance_;
}

bool coordinator::known_gone(std::string_view instance) const {
    if (!members_ || !members_read_ || std::chrono::steady_clock::now() - *members_read_ > settings_.lease_duration)
        return false;
    return std::find(live_.begin(), live_.end(), instance) == live_.end();
}

std::string coordinator::assignee(std::string const& repo) const {
    auto it = owner_.find(repo);
    return members_ && it != owner_.end() ? it->second : std::string();
}

void coordinator::start(std::unique_ptr<store::store> members) {
    if (!members)
        return;
    members_ = std::move(members);
    beating_ = true;
    net::co_spawn(executor_, beat(), [this](std::exception_ptr failure) {
        beating_ = false;
        if (failure)
            log_.error({}, "coordination: the heartbeats stopped on an internal error");
        if (stopping_ && after_stop_)
            std::exchange(after_stop_, nullptr)();
    });
}

awaitable<void> coordinator::beat() {
    auto const skew = settings_.max_clock_skew.count();
    while (!stopping_) {
        // A heartbeat lasts a lease: a daemon that stops beating loses its repositories to
        // the others once they no longer count it, about when its leases run out.
        // A named heartbeat: g++ 12 destroys a braced temporary passed to a coroutine twice.
        coord::heartbeat mine{instance_, holder_, wall_ms() + settings_.lease_duration.count()};
        auto published = co_await coord::publish(*members_, std::move(mine));
        if (!published)
            log_.warning({}, "coordination: heartbeat not written (the others stop counting this daemon after " +
                                 std::to_string(settings_.lease_duration.count() / 1000) +
                                 " s without one): " + published.error().message);
        auto seen = co_await coord::live_members(*members_, wall_ms(), skew);
        if (seen) {
            members_read_ = std::chrono::steady_clock::now();
            std::vector<std::string> live{instance_};
            for (auto const& beat : *seen) {
                if (beat.instance == instance_ && beat.holder != holder_)
                    log_.error({}, "coordination: another daemon (" + beat.holder + ") publishes heartbeats as '" +
                                       instance_ + "': give each daemon its own 'instance'");
                if (beat.instance != instance_)
                    live.push_back(beat.instance);
            }
            std::sort(live.begin(), live.end());
            if (live != live_) {
                std::string names;
                for (auto const& name : live)
                    names += (names.empty() ? "" : ", ") + name;
                log_.info({}, "coordination: " + std::to_string(live.size()) + " daemon(s) share the repositories: " +
                                  names);
                live_ = std::move(live);
                reassign();
                stats_.set_members(live_.size());
            }
        } else {
            log_.warning({}, "coordination: members not read (the last view stays): " + seen.error().message);
        }
        if (stopping_)
            break;
        timer_.expires_after(settings_.heartbeat_interval);
        co_await timer_.async_wait(use_op);
    }
    if (auto gone = co_await coord::withdraw(*members_, instance_); !gone)
        log_.warning({}, "coordination: heartbeat not withdrawn (it expires by itself): " + gone.error().message);
}

void coordinator::stop(std::function<void()> then) {
    stopping_ = true;
    timer_.cancel();
    if (!beating_) {
        then();
        return;
    }
    after_stop_ = std::move(then);
}

} // namespace mirror::daemon
