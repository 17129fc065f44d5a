#include "core/store/throttled_store.hpp"

#include "core/store/local_store.hpp"
#include "tests/support/run.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

#include <fstream>

using namespace mirror;
using namespace std::chrono_literals;
using store::pacer;

namespace {

pacer::clock::time_point at(std::chrono::milliseconds since_start) { return pacer::clock::time_point(1h + since_start); }

} // namespace

TEST_CASE("a pacer lets one second's worth through at once, then spreads use evenly") {
    pacer requests(10); // 10 per second: one every 100 ms, a burst of 10
    for (int i = 0; i < 10; ++i)
        CHECK(requests.delay_for(1, at(0ms)) == 0ms);
    CHECK(requests.delay_for(1, at(0ms)) == 100ms);
    CHECK(requests.delay_for(1, at(0ms)) == 200ms);
    // After an idle spell the burst is available again, but no more than one second's worth.
    for (int i = 0; i < 10; ++i)
        CHECK(requests.delay_for(1, at(10s)) == 0ms);
    CHECK(requests.delay_for(1, at(10s)) == 100ms);
}

TEST_CASE("a pacer below one per second still lets a unit through after the idle time it costs") {
    pacer slow(0.5); // one every two seconds
    CHECK(slow.delay_for(1, at(0ms)) == 0ms); // the burst is one unit
    CHECK(slow.delay_for(1, at(0ms)) == 2s);
    CHECK(slow.delay_for(1, at(6s)) == 0ms);
    CHECK(slow.delay_for(1, at(6s)) == 2s);
}

TEST_CASE("a byte pacer charges large chunks by their size") {
    pacer bandwidth(1024 * 1024); // 1 MiB/s
    CHECK(bandwidth.delay_for(512 * 1024, at(0ms)) == 0ms);
    CHECK(bandwidth.delay_for(512 * 1024, at(0ms)) == 0ms);
    CHECK(bandwidth.delay_for(1024 * 1024, at(0ms)) == 1s);
    CHECK(bandwidth.delay_for(1024 * 1024, at(500ms)) == 1500ms);
}

TEST_CASE("a throttled store reads, lists and writes what its inner store does, and no limits means no wrapper") {
    test::temp_dir tmp;
    std::ofstream(tmp.path() / "a.txt") << "alpha";
    auto inner = store::local_store::open(tmp.path(), true);
    REQUIRE(inner);
    store::store* raw = inner->get();
    auto same = store::throttled(std::move(*inner), std::make_shared<store::throttle>(store::rate_limits{}));
    CHECK(same.get() == raw);

    auto limits = std::make_shared<store::throttle>(store::rate_limits{1000.0, 1u << 20});
    auto paced = store::throttled(std::move(same), limits);
    CHECK(paced.get() != raw);
    CHECK(paced->caps().can_list);
    CHECK(paced->describe() == raw->describe());
    test::event_loop loop;
    auto got = loop(store::read_all(*paced, "a.txt", 100)); // through the paced sink
    REQUIRE(got);
    CHECK(*got == "alpha");
    REQUIRE(loop(store::write_all(*paced, "b.txt", "beta", store::write_mode::create_only)));
    auto back = loop(store::read_all(*raw, "b.txt", 100));
    REQUIRE(back);
    CHECK(*back == "beta");
    std::vector<std::string> keys;
    REQUIRE(loop(paced->list("", [&](store::list_entry e) -> result<void> {
        keys.push_back(e.key);
        return {};
    })));
    CHECK(keys.size() == 2);
}

TEST_CASE("a throttle holds a burst of requests to its rate") {
    // Not a timing test of the machine: 25 requests at 10 per second must take at least
    // the 1.5 s the rate imposes past the burst of 10, however fast the machine is.
    auto limits = std::make_shared<store::throttle>(store::rate_limits{10.0, std::nullopt});
    test::event_loop loop;
    auto started = std::chrono::steady_clock::now();
    loop([](std::shared_ptr<store::throttle> t) -> awaitable<int> {
        for (int i = 0; i < 25; ++i)
            co_await t->request();
        co_return 0;
    }(limits));
    CHECK(std::chrono::steady_clock::now() - started >= 1400ms);
}
