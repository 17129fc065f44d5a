#include "daemon/service/schedule.hpp"

#include <doctest/doctest.h>

using namespace mirror;
using namespace std::chrono_literals;
using daemon::next_wait;
using daemon::poll_settings;

TEST_CASE("the wait is the interval spread by jitter, both ways, and never under a second") {
    poll_settings every_minute{60s, 0.10, 1h};
    CHECK(next_wait(every_minute, 0, 0.5) == 60s);
    CHECK(next_wait(every_minute, 0, 0.0) == 54s);
    CHECK(next_wait(every_minute, 0, 1.0) == 66s);
    CHECK(next_wait({60s, 0.0, 1h}, 0, 0.9) == 60s);
    CHECK(next_wait({2s, 1.0, 1h}, 0, 0.0) == 1s); // 0 s would spin
}

TEST_CASE("after failures the wait doubles each time, up to backoff_max, and jitter still spreads it") {
    poll_settings settings{60s, 0.0, 10min};
    CHECK(next_wait(settings, 1, 0.5) == 120s);
    CHECK(next_wait(settings, 2, 0.5) == 240s);
    CHECK(next_wait(settings, 3, 0.5) == 480s);
    CHECK(next_wait(settings, 4, 0.5) == 600s);
    CHECK(next_wait(settings, 1000, 0.5) == 600s);
    CHECK(next_wait({60s, 0.5, 10min}, 1000, 0.0) == 300s);
    // A cap below the interval never makes a failing repository poll faster than a healthy one.
    CHECK(next_wait({10min, 0.0, 1min}, 3, 0.5) == 10min);
}
