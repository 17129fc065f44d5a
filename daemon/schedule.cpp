#include "daemon/schedule.hpp"

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

std::vector<std::pair<std::string, double>> lag_tracker::update(std::vector<sync::ref_state> const& refs, double now) {
    if (!refs.empty()) {
        std::map<std::string, double> next;
        for (auto const& ref : refs) {
            if (ref.in_sync())
                continue;
            auto known = behind_since_.find(ref.name);
            next[ref.name] = known == behind_since_.end() ? now : known->second;
        }
        behind_since_ = std::move(next);
    }
    std::vector<std::pair<std::string, double>> lags;
    for (auto const& ref : refs)
        lags.emplace_back(ref.name, ref.in_sync() ? 0.0 : now - behind_since_[ref.name]);
    if (refs.empty())
        for (auto const& [name, since] : behind_since_)
            lags.emplace_back(name, now - since);
    return lags;
}

} // namespace mirror::daemon
