#include "daemon/cli/sync_lease.hpp"

#include "core/coord/fenced_store.hpp"
#include "core/coord/lease.hpp"
#include "core/coord/probe.hpp"
#include "core/io/errors.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <algorithm>
#include <chrono>
#include <random>
#include <unistd.h>

namespace mirror::daemon {

namespace {

using namespace std::chrono_literals;
using namespace net::experimental::awaitable_operators;

constexpr auto lease_time = 60s, renew_every = 10s, write_margin = 15s;
/// How long the mirror's record of its server's answer to the probe is taken instead of
/// asking again: a server upgraded in between is seen at the next probe after it.
constexpr std::chrono::hours probe_kept_for{24 * 30};

std::string holder_name() {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0')
        std::snprintf(host, sizeof host, "localhost");
    std::random_device seed;
    return "sync@" + std::string(host) + "/" + std::to_string(::getpid()) + "-" + std::to_string(seed() % 100000);
}

sync::sync_report refused(error why) {
    sync::sync_report report;
    report.fatal = std::move(why);
    report.io_failure = true;
    return report;
}

/// Renews every renew_every until the lease is lost; returns who has it then.
awaitable<std::string> keep(coord::lease& held) {
    net::steady_timer wait(co_await net::this_coro::executor);
    for (;;) {
        wait.expires_after(renew_every);
        co_await wait.async_wait(use_op);
        auto changed = co_await held.acquire_or_renew();
        if (changed && (*changed == coord::lease_change::lost || *changed == coord::lease_change::held_by_other))
            co_return held.last_seen().holder;
    }
}

} // namespace

awaitable<sync::sync_report> sync_holding_lease(store::store& origin, store::store& mirror, store::store& target,
                                                sync::sync_options options, sync::sync_observer* observer) {
    if (!mirror.caps().conditional_writes)
        co_return co_await sync::run_sync(origin, target, std::move(options), observer);
    std::string const holder = holder_name();
    std::string probe_key = ".fdl-mirror/probe-" + holder;
    std::replace(probe_key.begin() + 12, probe_key.end(), '/', '-');
    auto honoured =
        co_await coord::honours_conditional_writes_remembered(mirror, probe_key, std::chrono::system_clock::now(), probe_kept_for);
    if (!honoured)
        co_return refused(error{honoured.error().code, "mirror: " + honoured.error().message});
    if (!*honoured) {
        auto report = co_await sync::run_sync(origin, target, std::move(options), observer);
        report.warnings.push_back("mirror: " + mirror.describe() +
                                  " does not honour conditional writes: nothing stopped another writer (a daemon, "
                                  "another sync) from writing it at the same time");
        co_return report;
    }
    // A daemon's lease idle between its passes is its claim to the next one: a sync by hand
    // waits out the expiry it claims (within a day) rather than a lease's time.
    coord::lease held(mirror, holder, {".fdl-mirror/lease", lease_time, 5s, std::chrono::hours(24)});
    auto taken = co_await held.acquire_or_renew();
    if (!taken)
        co_return refused(error{taken.error().code, "mirror: " + taken.error().message});
    if (!held.held()) {
        auto const& other = held.last_seen();
        co_return refused(make_error(
            io::store_errc::conflict,
            "mirror: " + held.describe() + " is held by " + other.holder + " (for about " +
                std::to_string(std::max<std::int64_t>(
                    0, (other.expires - std::chrono::duration_cast<std::chrono::milliseconds>(
                                            std::chrono::system_clock::now().time_since_epoch())
                                            .count()) /
                           1000)) +
                " s more): another fdl-mirror mirrors this repository; nothing was written"));
    }
    coord::fenced_store fenced(target, held, write_margin);
    auto ended = co_await (sync::run_sync(origin, fenced, std::move(options), observer) || keep(held));
    if (ended.index() == 1)
        co_return refused(make_error(io::store_errc::conflict,
                                     "mirror: the lease was lost to " + std::get<1>(ended) +
                                         " during the pass: it stopped writing (what it published stays)"));
    auto report = std::move(std::get<0>(ended));
    if (auto released = co_await held.release(); !released)
        report.warnings.push_back("mirror: lease not released (it runs out by itself): " + released.error().message);
    co_return report;
}

} // namespace mirror::daemon
