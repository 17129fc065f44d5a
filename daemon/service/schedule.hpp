#pragma once
// When a repository's next pass starts: the pure part of the daemon's scheduling, apart
// from its timers, so that tests drive it without waiting (docs/development.md,
// "Asynchrony and threads").

#include <chrono>

namespace mirror::daemon {

/// How a repository is polled.
struct poll_settings {
    std::chrono::milliseconds interval{std::chrono::minutes(5)};
    double jitter = 0.10; ///< each wait is interval × (1 ± up to this), in [0, 1]
    std::chrono::milliseconds backoff_max{std::chrono::hours(1)};
};

/// The wait before the next pass. After a pass that succeeded (`failures` = 0): the
/// interval spread by jitter, `random` in [0, 1) choosing where (0.5 is the interval
/// itself). After `failures` failed passes in a row: the interval doubled per failure
/// (retrying sooner would only load a broken origin), capped at backoff_max (but never
/// below the interval), then spread the same way. Never less than one second.
std::chrono::milliseconds next_wait(poll_settings const& settings, unsigned failures, double random);

} // namespace mirror::daemon
