// daemon::coordinator with its members in a store in memory: the repositories another daemon
// held become this one's when that daemon leaves, and each is announced once, so that its job
// takes the lease at once instead of at its next poll.

#include "daemon/service/coordinator.hpp"

#include "core/coord/membership.hpp"

#include "tests/support/memory_store.hpp"
#include "tests/support/run.hpp"

#include <boost/asio/steady_timer.hpp>
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <set>

using namespace mirror;
using namespace std::chrono_literals;

namespace {

std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

} // namespace

TEST_CASE("coordinator: the repositories of a daemon that left are announced as gained, each once, and none at start") {
    test::event_loop run_on;
    std::FILE* quiet = std::fopen("/dev/null", "w");
    daemon::logger log{config::log_settings{}, quiet};
    daemon::metrics stats{{"0.1.0", "0.12.2", true}};
    config::coordination_settings settings;
    settings.instance = "alpha";
    settings.members = "mem://members/";
    settings.lease_duration = 10s;
    settings.heartbeat_interval = 50ms;
    daemon::coordinator coord(run_on.io.get_executor(), settings, log, stats);

    auto bucket = std::make_shared<test::memory_bucket>();
    test::memory_store others(bucket); // what another daemon writes
    run_on([&]() -> awaitable<bool> {
        // A named heartbeat: g++ 12 destroys a braced temporary passed to a coroutine twice.
        coord::heartbeat betas_beat{"beta", "beta/life", now_ms() + 60'000};
        auto beat = co_await coord::publish(others, std::move(betas_beat));
        co_return beat.has_value();
    }());

    std::vector<std::string> const repos{"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7"};
    std::multiset<std::string> gained;
    std::set<std::string> betas;
    coord.set_repositories(repos);
    coord.on_gained([&](std::string const& repo) { gained.insert(repo); });
    coord.start(std::make_unique<test::memory_store>(bucket));
    CHECK(coord.spreads());

    run_on([&]() -> awaitable<bool> {
        net::steady_timer wait(run_on.io.get_executor());
        auto until = [&](auto done) -> awaitable<bool> {
            for (int i = 0; i < 200 && !done(); ++i) {
                wait.expires_after(10ms);
                co_await wait.async_wait(use_op);
            }
            co_return done();
        };
        // beta is seen: half the repositories are its own (loads capped at ceil(8/2)).
        CHECK(co_await until([&] { return !coord.assigned("r0") || !coord.assigned("r1") || !coord.assigned("r2") ||
                                          !coord.assigned("r3") || !coord.assigned("r4"); }));
        for (auto const& r : repos)
            if (!coord.assigned(r))
                betas.insert(r);
        CHECK(betas.size() == 4);
        CHECK(gained.empty()); // losing repositories gains none
        auto gone = co_await coord::withdraw(others, "beta"); // beta stops cleanly
        CHECK(gone.has_value());
        CHECK(co_await until([&] { return gained.size() >= betas.size(); }));
        wait.expires_after(200ms); // a few more heartbeats: nothing announced twice
        co_await wait.async_wait(use_op);
        bool stopped = false;
        coord.stop([&] { stopped = true; });
        CHECK(co_await until([&] { return stopped; }));
        co_return true;
    }());
    CHECK(std::set<std::string>(gained.begin(), gained.end()) == betas);
    CHECK(gained.size() == betas.size());
    for (auto const& r : repos)
        CHECK(coord.assigned(r));
    std::fclose(quiet);
}
