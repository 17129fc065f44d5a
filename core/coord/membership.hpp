#pragma once
// The daemons that share repositories, as they publish themselves: one small object per
// daemon (`INSTANCE.json` under the `members` location), rewritten every heartbeat with
// an expiry. A daemon is live while its expiry, plus the clock skew allowed, is ahead.

#include "core/io/net.hpp"
#include "core/store/store.hpp"
#include "verify/error.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace mirror::coord {

struct heartbeat {
    std::string instance;     ///< the daemon's configured name
    std::string holder;       ///< "INSTANCE/LIFE": this run of it
    std::int64_t expires = 0; ///< unix milliseconds; 0: gone (stopped cleanly)
};

/// Writes `beat` as `INSTANCE.json` at the root of `members`.
awaitable<result<void>> publish(store::store& members, heartbeat beat);
/// Removes this daemon's heartbeat (a clean stop: the others need not wait for it to expire).
awaitable<result<void>> withdraw(store::store& members, std::string instance);
/// The heartbeats under `members` that are live at `now_ms` (allowing `skew_ms`), sorted
/// by instance. Unreadable or misnamed objects are skipped: they count as no member.
awaitable<result<std::vector<heartbeat>>> live_members(store::store& members, std::int64_t now_ms,
                                                        std::int64_t skew_ms);

} // namespace mirror::coord
