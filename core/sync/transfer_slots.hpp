#pragma once
// A cap on transfers in flight shared by several passes (the daemon's max_transfers), and
// on passes running at once (max_passes), so that many repositories polled at once do not
// open thousands of connections or hold the memory of every pass: a budget of `count`
// slots, granted first come first served (io::memory_budget, with one unit a slot).
// Used on one I/O thread (every pass runs there).

#include "core/io/net.hpp"
#include "core/io/memory_budget.hpp"

#include <cstddef>

namespace mirror::sync {

class transfer_slots {
public:
    explicit transfer_slots(std::size_t count) : slots_(count == 0 ? 1 : count) {}
    transfer_slots(transfer_slots const&) = delete;
    transfer_slots& operator=(transfer_slots const&) = delete;

    /// A slot held until it is destroyed; a default-made one holds nothing.
    using slot = io::memory_budget::grant;

    /// Waits, first come first served, for a free slot. Cancelling the waiting coroutine
    /// leaves the queue (operation_aborted is thrown, as by any cancelled operation).
    awaitable<slot> acquire() { return slots_.acquire(1); }

    /// Changes the cap (a reloaded configuration); slots held above it stay until freed.
    void resize(std::size_t count) { slots_.resize(count == 0 ? 1 : count); }

    std::size_t in_use() const { return static_cast<std::size_t>(slots_.in_use()); }
    std::size_t waiting() const { return slots_.waiting(); }

private:
    io::memory_budget slots_;
};

} // namespace mirror::sync
