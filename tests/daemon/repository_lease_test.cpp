// daemon::repository_lease on a store in memory, with a clock moved by hand: taking,
// standing by, taking over, refusing a store that ignores conditions, the keeper finding
// the lease lost, reopening on a moved mirror, and releasing at the end.

#include "daemon/service/repository_lease.hpp"

#include "daemon/common/log.hpp"
#include "daemon/metrics/metrics.hpp"
#include "daemon/service/coordinator.hpp"

#include "tests/daemon/captured_log.hpp"
#include "tests/support/manual_clock.hpp"
#include "tests/support/memory_store.hpp"
#include "tests/support/run.hpp"
#include "tests/support/temp_dir.hpp"

#include <boost/asio/steady_timer.hpp>
#include <doctest/doctest.h>

#include <cstdio>

using namespace mirror;
using namespace std::chrono_literals;

namespace {

struct lease_fixture {
    test::event_loop run_on;
    std::shared_ptr<test::memory_bucket> bucket = std::make_shared<test::memory_bucket>();
    test::manual_clock time;
    test::captured_log logs;
    daemon::metrics stats{{"0.1.0", "0.12.2", true}};
    config::coordination_settings settings = [] {
        config::coordination_settings s;
        s.instance = "alpha";
        s.lease_duration = 600ms; // renewed every 100 ms
        s.max_clock_skew = 100ms;
        return s;
    }();
    daemon::coordinator coord{run_on.io.get_executor(), settings, logs.log, stats};
    int opened = 0;

    lease_fixture() { stats.set_repositories({daemon::repository_info{"repo"}}); }

    daemon::lease_context context(std::string prefix = "repo/") {
        daemon::lease_context c;
        c.executor = run_on.io.get_executor();
        c.coord = &coord;
        c.log = &logs.log;
        c.stats = &stats;
        c.repository = "repo";
        c.open_store = [this, prefix]() -> result<std::unique_ptr<store::store>> {
            ++opened;
            return std::unique_ptr<store::store>(std::make_unique<test::memory_store>(bucket, prefix));
        };
        c.clock = time.clock();
        return c;
    }

    daemon::repository_lease::gate take(daemon::repository_lease& lease, std::string& problem) {
        return run_on([&]() -> awaitable<daemon::repository_lease::gate> { co_return co_await lease.take(problem); }());
    }
    void stop(daemon::repository_lease& lease) {
        run_on([&]() -> awaitable<bool> {
            co_await lease.stop();
            co_return true;
        }());
    }
    coord::lease_record record(std::string const& key = "repo/.fdl-mirror/lease") {
        auto parsed = coord::parse_lease(bucket->objects.at(key).bytes, key);
        REQUIRE(parsed.has_value());
        return *parsed;
    }
    /// Another daemon's lease, taken with its own clock.
    void held_by_other(std::string const& holder, std::uint64_t token = 7) {
        coord::lease_record other{holder, token, time.wall + 600, time.wall};
        bucket->put("repo/.fdl-mirror/lease", coord::render_lease(other));
    }
};

bool metric_has(daemon::metrics const& m, std::string const& line) { return m.text().find(line) != std::string::npos; }

} // namespace

TEST_CASE("repository_lease: takes a free lease under token 1, fences the mirror, and releases it at stop") {
    lease_fixture f;
    daemon::repository_lease lease(f.context());
    std::string problem;
    CHECK(f.take(lease, problem) == daemon::repository_lease::gate::go);
    CHECK(problem.empty());
    REQUIRE(lease.in_force());
    CHECK(lease.held());
    CHECK(lease.mirror_needs_rewrap());
    CHECK_FALSE(lease.mirror_needs_rewrap()); // said once
    auto record = f.record();
    CHECK(record.holder == f.coord.holder());
    CHECK(record.token == 1);
    CHECK(metric_has(f.stats, "fdl_mirror_lease_held{repo=\"repo\"} 1"));
    CHECK(f.logs.read().find("lease taken: this daemon mirrors the repository (fencing token 1)") != std::string::npos);

    // The fence refuses writes once the lease no longer covers the write margin.
    auto fenced = lease.fence(std::make_unique<test::memory_store>(f.bucket, "repo/"));
    CHECK(fenced->describe() == "mem://memory/repo/");

    f.stop(lease);
    CHECK_FALSE(lease.held());
    CHECK(f.record().expires == 0);   // released: the next daemon need not wait it out
    CHECK(f.record().token == 1);     // the token is kept, so that it keeps growing
    CHECK(f.logs.read().find("lease released") != std::string::npos);
}

TEST_CASE("repository_lease: stands by while another daemon holds the lease, then takes it over once it ran out") {
    lease_fixture f;
    f.held_by_other("beta/life-1");
    daemon::repository_lease lease(f.context());
    std::string problem;
    CHECK(f.take(lease, problem) == daemon::repository_lease::gate::stand_by);
    CHECK(lease.standing_by_for() == "the lease is held by beta/life-1");
    CHECK_FALSE(lease.held());
    CHECK(f.record().holder == "beta/life-1"); // untouched

    // Still within its duration plus the skew: standing by, logged once.
    f.time.advance(500ms);
    CHECK(f.take(lease, problem) == daemon::repository_lease::gate::stand_by);
    auto const logs = f.logs.read();
    CHECK(logs.find("standing by: the lease is held by beta/life-1") != std::string::npos);
    CHECK(logs.find("standing by") == logs.rfind("standing by"));

    // Past expiry + max_clock_skew on this host's clock: taken over, under a larger token.
    f.time.advance(300ms);
    CHECK(f.take(lease, problem) == daemon::repository_lease::gate::go);
    CHECK(lease.held());
    CHECK(lease.standing_by_for().empty());
    CHECK(f.record().holder == f.coord.holder());
    CHECK(f.record().token == 8);
    CHECK(f.logs.read().find("lease taken over from beta/life-1, whose lease ran out (fencing token 8)") !=
          std::string::npos);
    CHECK(metric_has(f.stats, "fdl_mirror_lease_takeovers_total{repo=\"repo\"} 1"));
    f.stop(lease);
}

TEST_CASE("repository_lease: a lease claiming more than duration + skew is an anomaly until it is sound again") {
    lease_fixture f;
    coord::lease_record forged{"beta/life-1", 3, f.time.wall + 3'600'000, f.time.wall};
    f.bucket->put("repo/.fdl-mirror/lease", coord::render_lease(forged));
    daemon::repository_lease lease(f.context());
    std::string problem;
    CHECK(f.take(lease, problem) == daemon::repository_lease::gate::stand_by);
    CHECK_FALSE(lease.anomaly().empty());
    CHECK(metric_has(f.stats, "fdl_mirror_lease_anomaly{repo=\"repo\"} 1"));

    // Left unrenewed for duration + skew on this host's clock: taken, whatever it claims.
    f.time.advance(800ms);
    CHECK(f.take(lease, problem) == daemon::repository_lease::gate::go);
    CHECK_FALSE(lease.anomaly().empty()); // as last read, before it was taken
    // Renewed once too little of it is left: this daemon reads its own lease, which is sound.
    f.time.advance(500ms);
    CHECK(f.take(lease, problem) == daemon::repository_lease::gate::go);
    CHECK(lease.anomaly().empty());
    CHECK(metric_has(f.stats, "fdl_mirror_lease_anomaly{repo=\"repo\"} 0"));
    CHECK(f.logs.read().find("the lease is sound again") != std::string::npos);
    f.stop(lease);
}

TEST_CASE("repository_lease: a mirror without conditional writes takes no lease, and its store is not fenced") {
    lease_fixture f;
    test::temp_dir folder;
    auto context = f.context();
    context.open_store = [&]() -> result<std::unique_ptr<store::store>> { return test::open_folder(folder.path(), true); };
    daemon::repository_lease lease(std::move(context));
    std::string problem;
    CHECK(f.take(lease, problem) == daemon::repository_lease::gate::go);
    CHECK_FALSE(lease.in_force());
    CHECK_FALSE(lease.mirror_needs_rewrap());
    auto mirror = test::open_folder(folder.path(), true);
    auto* before = mirror.get();
    CHECK(lease.fence(std::move(mirror)).get() == before);
    CHECK(f.bucket->objects.empty());
}

TEST_CASE("repository_lease: a store that ignores the conditions of writes is refused under coordination: leases, "
          "and warned of otherwise") {
    lease_fixture f;
    f.bucket->honours_conditions = false;
    SUBCASE("leases") {
        f.settings.mode = config::coordination_mode::leases;
        daemon::coordinator coord(f.run_on.io.get_executor(), f.settings, f.logs.log, f.stats);
        auto context = f.context();
        context.coord = &coord;
        daemon::repository_lease lease(std::move(context));
        std::string problem;
        CHECK(f.take(lease, problem) == daemon::repository_lease::gate::refuse);
        CHECK(problem.find("mem://memory/repo/ does not honour conditional writes") != std::string::npos);
        CHECK_FALSE(f.bucket->objects.contains("repo/.fdl-mirror/lease")); // nothing is written
    }
    SUBCASE("automatic") {
        daemon::repository_lease lease(f.context());
        std::string problem;
        CHECK(f.take(lease, problem) == daemon::repository_lease::gate::go);
        CHECK(f.logs.read().find("cannot stop two daemons writing at once") != std::string::npos);
        f.stop(lease);
    }
}

TEST_CASE("repository_lease: the keeper renews a held lease, and says so when another daemon took it") {
    lease_fixture f;
    daemon::repository_lease lease(f.context());
    std::string problem;
    REQUIRE(f.take(lease, problem) == daemon::repository_lease::gate::go);
    auto const first = f.bucket->objects.at("repo/.fdl-mirror/lease").tag;
    std::string lost_to;
    lease.start_keeper([] { return true; }, [&](std::string const& holder) { lost_to = holder; });
    f.run_on([&]() -> awaitable<bool> {
        net::steady_timer wait(f.run_on.io.get_executor());
        for (int i = 0; i < 50 && f.bucket->objects.at("repo/.fdl-mirror/lease").tag == first; ++i) {
            wait.expires_after(20ms);
            co_await wait.async_wait(use_op);
        }
        CHECK(f.bucket->objects.at("repo/.fdl-mirror/lease").tag != first); // renewed
        f.held_by_other("beta/life-2", 2); // taken behind its back
        for (int i = 0; i < 50 && lost_to.empty(); ++i) {
            wait.expires_after(20ms);
            co_await wait.async_wait(use_op);
        }
        co_await lease.stop();
        co_return true;
    }());
    CHECK(lost_to == "beta/life-2");
    CHECK_FALSE(lease.held());
    CHECK(f.record().holder == "beta/life-2"); // a lost lease is not released over its new holder
    CHECK(metric_has(f.stats, "fdl_mirror_leases_lost_total{repo=\"repo\"} 1"));
}

TEST_CASE("repository_lease: a moved mirror gives up the old mirror's lease and takes the new one's") {
    lease_fixture f;
    std::string prefix = "repo/";
    auto context = f.context();
    context.open_store = [&]() -> result<std::unique_ptr<store::store>> {
        ++f.opened;
        return std::unique_ptr<store::store>(std::make_unique<test::memory_store>(f.bucket, prefix));
    };
    daemon::repository_lease lease(std::move(context));
    std::string problem;
    REQUIRE(f.take(lease, problem) == daemon::repository_lease::gate::go);
    CHECK(lease.mirror_needs_rewrap());
    CHECK(f.opened == 1);

    prefix = "moved/";
    lease.reopen();
    CHECK(f.take(lease, problem) == daemon::repository_lease::gate::go);
    CHECK(f.opened == 2);
    CHECK(lease.mirror_needs_rewrap());
    CHECK(f.record("repo/.fdl-mirror/lease").expires == 0); // the old one released
    CHECK(f.record("moved/.fdl-mirror/lease").holder == f.coord.holder());
    f.stop(lease);
}

TEST_CASE("repository_lease: after a failed pass, the lease's store is opened afresh unless it holds the lease") {
    lease_fixture f;
    f.held_by_other("beta/life-1");
    daemon::repository_lease lease(f.context());
    std::string problem;
    REQUIRE(f.take(lease, problem) == daemon::repository_lease::gate::stand_by);
    lease.forget_unless_held();
    CHECK_FALSE(lease.in_force());
    f.bucket->objects.erase("repo/.fdl-mirror/lease");
    CHECK(f.take(lease, problem) == daemon::repository_lease::gate::go);
    CHECK(f.opened == 2);
    lease.forget_unless_held(); // held: kept
    CHECK(lease.in_force());
    CHECK(f.opened == 2);
    f.stop(lease);
}

TEST_CASE("repository_lease: a lease of an earlier run of this instance is taken back at once, under a larger "
          "token, and another instance's is not") {
    lease_fixture f;
    SUBCASE("this instance, killed and restarted") {
        f.held_by_other("alpha/an-earlier-life", 3); // unexpired: a kill -9 left it
        daemon::repository_lease lease(f.context());
        std::string problem;
        CHECK(f.take(lease, problem) == daemon::repository_lease::gate::go);
        CHECK(f.record().holder == f.coord.holder());
        CHECK(f.record().token == 4); // raised: a write of the earlier run is fenced off
        CHECK(f.logs.read().find("lease taken from alpha/an-earlier-life, an earlier run of this instance") !=
              std::string::npos);
        CHECK(metric_has(f.stats, "fdl_mirror_lease_takeovers_total{repo=\"repo\"} 0"));
        f.stop(lease);
    }
    SUBCASE("an instance whose name only begins the same") {
        f.held_by_other("alphabet/its-life", 3);
        daemon::repository_lease lease(f.context());
        std::string problem;
        CHECK(f.take(lease, problem) == daemon::repository_lease::gate::stand_by);
        CHECK(f.record().holder == "alphabet/its-life");
    }
}

TEST_CASE("repository_lease: a held lease the keeper cannot renew stops counting as held once too little is left "
          "to write, and counts again once renewed") {
    lease_fixture f;
    daemon::repository_lease lease(f.context());
    std::string problem;
    REQUIRE(f.take(lease, problem) == daemon::repository_lease::gate::go);
    CHECK(metric_has(f.stats, "fdl_mirror_lease_held{repo=\"repo\"} 1"));
    lease.start_keeper([] { return false; }, [](std::string const&) {});
    f.bucket->unreachable = true; // the mirror's store is down
    f.time.advance(500ms);        // a lease of 600 ms: less than its write margin left
    bool dropped = false, back = false;
    f.run_on([&]() -> awaitable<bool> { // the keeper runs beside this, until stop()
        net::steady_timer wait(f.run_on.io.get_executor());
        for (int i = 0; i < 100 && !dropped; ++i) {
            wait.expires_after(20ms);
            co_await wait.async_wait(use_op);
            dropped = metric_has(f.stats, "fdl_mirror_lease_held{repo=\"repo\"} 0");
        }
        f.bucket->unreachable = false;
        for (int i = 0; i < 100 && !back; ++i) {
            wait.expires_after(20ms);
            co_await wait.async_wait(use_op);
            back = metric_has(f.stats, "fdl_mirror_lease_held{repo=\"repo\"} 1");
        }
        co_await lease.stop();
        co_return true;
    }());
    CHECK(dropped);
    CHECK(f.logs.read().find("lease not renewed, and too little of it is left to write") != std::string::npos);
    CHECK(back);
}

TEST_CASE("repository_lease: an idle lease that cannot be made active again stops counting as held, and counts "
          "again once it is") {
    lease_fixture f;
    daemon::repository_lease lease(f.context());
    std::string problem;
    REQUIRE(f.take(lease, problem) == daemon::repository_lease::gate::go);
    f.run_on([&]() -> awaitable<bool> {
        co_await lease.rest(1s);
        co_return true;
    }());
    CHECK(metric_has(f.stats, "fdl_mirror_lease_held{repo=\"repo\"} 1")); // idle, and this daemon's
    f.bucket->unreachable = true; // the next pass cannot reach the mirror
    CHECK(f.take(lease, problem) == daemon::repository_lease::gate::refuse);
    CHECK(metric_has(f.stats, "fdl_mirror_lease_held{repo=\"repo\"} 0"));
    f.bucket->unreachable = false;
    CHECK(f.take(lease, problem) == daemon::repository_lease::gate::go);
    CHECK(metric_has(f.stats, "fdl_mirror_lease_held{repo=\"repo\"} 1"));
    f.stop(lease);
}

TEST_CASE("repository_lease: a pass costs two lease writes, and nothing is written between passes") {
    // Issue 33, section 5: made active when the pass starts, left idle when it ends; the
    // keeper writes nothing while it is idle, however long the wait. (All in one run of the
    // loop: the keeper's timer keeps it busy until stop().)
    lease_fixture f;
    daemon::repository_lease lease(f.context());
    auto writes = [&] { return f.bucket->next_tag; };
    std::uint64_t before = 0;
    coord::lease_record idle;
    std::string logged_after_first;
    f.run_on([&]() -> awaitable<bool> {
        std::string problem;
        lease.start_keeper([] { return false; }, [](std::string const&) {});
        auto gate = co_await lease.take(problem); // pass 1 (and the probe of conditional writes, once)
        CHECK(gate == daemon::repository_lease::gate::go);
        before = writes();
        co_await lease.rest(5s);
        CHECK(writes() - before == 1);
        idle = f.record();
        CHECK(idle.idle);
        CHECK(idle.expires == f.time.wall + 5'000 + 600); // the wait, then a lease
        CHECK_FALSE(lease.held()); // nothing may be written under it
        CHECK(lease.mine());       // but it is this daemon's, and counted so
        auto fenced = lease.fence(std::make_unique<test::memory_store>(f.bucket, "repo/"));
        auto refused = co_await fenced->write_conditional("refs/heads/main", "x", std::nullopt);
        CHECK_FALSE(refused.has_value()); // the fence refuses writes under an idle lease

        // Six renewal periods of the keeper go by between the passes: no request.
        net::steady_timer wait(f.run_on.io.get_executor());
        wait.expires_after(600ms);
        co_await wait.async_wait(use_op);
        CHECK(writes() - before == 1);

        logged_after_first = f.logs.read();
        before = writes();
        auto again = co_await lease.take(problem); // pass 2: active again, then idle: two writes
        CHECK(again == daemon::repository_lease::gate::go);
        CHECK_FALSE(f.record().idle);
        co_await lease.rest(5s);
        CHECK(writes() - before == 2);
        co_await lease.stop();
        co_return true;
    }());
    CHECK(metric_has(f.stats, "fdl_mirror_lease_held{repo=\"repo\"}"));
    auto const logs = f.logs.read();
    CHECK(logs.find("lease taken", logged_after_first.size()) == std::string::npos); // not at every pass
    CHECK(f.record().token == idle.token); // the same holder: the same token
    CHECK(f.record().expires == 0);        // released at stop
}

TEST_CASE("repository_lease: another daemon's idle lease is its claim to the next pass, until it runs out or its "
          "heartbeat stops") {
    lease_fixture f;
    auto idle_of = [&](std::string const& holder, std::int64_t wait_ms) {
        coord::lease_record other{holder, 5, f.time.wall + wait_ms + 600, f.time.wall, true};
        f.bucket->put("repo/.fdl-mirror/lease", coord::render_lease(other));
    };
    SUBCASE("it runs out: its wait, a lease and the skew") {
        idle_of("beta/life-1", 2'000);
        auto context = f.context();
        context.longest_wait = [] { return std::chrono::milliseconds(2'000); };
        daemon::repository_lease lease(std::move(context));
        std::string problem;
        CHECK(f.take(lease, problem) == daemon::repository_lease::gate::stand_by);
        f.time.advance(2'000ms); // within the wait and its lease: still beta's
        CHECK(f.take(lease, problem) == daemon::repository_lease::gate::stand_by);
        f.time.advance(800ms);
        CHECK(f.take(lease, problem) == daemon::repository_lease::gate::go);
        CHECK(f.record().token == 6);
        CHECK(f.logs.read().find("lease taken over from beta/life-1, whose lease ran out") != std::string::npos);
        f.stop(lease);
    }
    SUBCASE("an idle lease claiming more than the longest wait is taken once unrenewed that long") {
        idle_of("beta/life-1", 3'600'000); // an hour, where the longest wait is 2 s
        auto context = f.context();
        context.longest_wait = [] { return std::chrono::milliseconds(2'000); };
        daemon::repository_lease lease(std::move(context));
        std::string problem;
        CHECK(f.take(lease, problem) == daemon::repository_lease::gate::stand_by);
        CHECK(lease.anomaly().find("more than its longest wait between passes") != std::string::npos);
        f.time.advance(2'800ms);
        CHECK(f.take(lease, problem) == daemon::repository_lease::gate::go);
        f.stop(lease);
    }
}
