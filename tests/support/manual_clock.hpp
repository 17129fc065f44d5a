#pragma once
// A host's clocks for coord::lease, moved by hand: tests drive a lease's time without
// waiting for it.

#include "core/coord/lease.hpp"

#include <chrono>
#include <cstdint>

namespace mirror::test {

struct manual_clock {
    std::int64_t wall = 1'800'000'000'000; ///< unix milliseconds
    std::int64_t elapsed = 1'000;          ///< the monotonic clock that counts pauses
    coord::lease_clock clock() {
        return {[this] { return wall; }, [this] { return elapsed; }};
    }
    void advance(std::chrono::milliseconds by) {
        wall += by.count();
        elapsed += by.count();
    }
};

} // namespace mirror::test
