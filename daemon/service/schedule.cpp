#include "daemon/service/schedule.hpp"

#include <algorithm>
#include <cmath>

namespace mirror::daemon {

std::chrono::milliseconds next_wait(poll_settings const& settings, unsigned failures, double random) {
    using ms = std::chrono::milliseconds;
    double base = static_cast<double>(settings.interval.count());
    if (failures > 0) {
        double cap = std::max(base, static_cast<double>(settings.backoff_max.count()));
        // 2^failures grows past any cap by 64 failures; stop doubling well before overflow.
        base = std::min(cap, base * std::pow(2.0, std::min(failures, 40u)));
    }
    double jitter = std::clamp(settings.jitter, 0.0, 1.0);
    double spread = 1.0 + jitter * (2.0 * std::clamp(random, 0.0, 1.0) - 1.0);
    return ms(std::max<long long>(1000, std::llround(base * spread)));
}

} // namespace mirror::daemon
