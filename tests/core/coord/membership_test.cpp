#include "core/coord/membership.hpp"

#include "core/store/local_store.hpp"
#include "tests/support/run.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

#include <fstream>

using namespace mirror;
using mirror::test::event_loop;
using mirror::test::temp_dir;

TEST_CASE("membership: the live heartbeats, sorted, expired, withdrawn, misnamed and damaged ones are no member") {
    temp_dir tmp;
    auto members = store::local_store::open(tmp.path(), true);
    REQUIRE(members.has_value());
    event_loop run_on;
    std::int64_t const now = 1'800'000'000'000;
    REQUIRE(run_on(coord::publish(**members, {"host-b", "host-b/2", now + 10'000})));
    REQUIRE(run_on(coord::publish(**members, {"host-a", "host-a/1", now + 1'000})));
    REQUIRE(run_on(coord::publish(**members, {"host-c", "host-c/9", now - 3'000}))); // expired 3 s ago
    REQUIRE(run_on(coord::publish(**members, {"host-d", "host-d/4", now - 500})));   // within the skew
    REQUIRE(run_on(coord::publish(**members, {"host-e", "host-e/5", now + 5'000})));
    REQUIRE(run_on(coord::withdraw(**members, "host-e")));
    std::ofstream(tmp.path() / "host-f.json") << "{\"instance\": \"host-g\", \"holder\": \"g\", \"expires\": 1}";
    std::ofstream(tmp.path() / "host-h.json") << "not json";
    std::ofstream(tmp.path() / "notes.txt") << "ignored";

    auto live = run_on(coord::live_members(**members, now, 1'000));
    REQUIRE(live.has_value());
    std::vector<std::string> instances;
    for (auto const& beat : *live)
        instances.push_back(beat.instance);
    CHECK(instances == std::vector<std::string>{"host-a", "host-b", "host-d"});
    CHECK(live->at(1).holder == "host-b/2");
    CHECK(live->at(1).expires == now + 10'000);
    CHECK(run_on(coord::withdraw(**members, "host-e"))); // already gone: still fine
}
