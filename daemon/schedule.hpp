#pragma once
// When a repository's next pass starts, and how long its refs have lagged: the pure parts
// of the daemon's scheduling, apart from its timers (style rule 9).

#include "core/sync/report.hpp"

#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

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

/// Since when each ref of a repository has been out of sync, to report
/// fdl_mirror_ref_lag_seconds: how long the origin has had a version the mirror lacks.
class lag_tracker {
public:
    /// Takes a pass's ref states at `now` (unix seconds) and returns each ref's lag: 0 when
    /// in sync, else the time since the first pass that found it out of sync (and out of
    /// sync ever since). A pass that stopped before the refs (empty `refs`) changes nothing
    /// and returns the lags as of `now`.
    std::vector<std::pair<std::string, double>> update(std::vector<sync::ref_state> const& refs, double now);

private:
    std::map<std::string, double> behind_since_;
};

} // namespace mirror::daemon
