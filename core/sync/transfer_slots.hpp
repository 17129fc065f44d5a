#pragma once
// A cap on transfers in flight shared by several passes: the daemon's max_transfers, so
// that many repositories polled at once do not open thousands of connections. Used on
// one I/O thread (every pass runs there).

#include "core/net.hpp"

#include <cstddef>
#include <deque>

namespace mirror::sync {

class transfer_slots {
public:
    explicit transfer_slots(std::size_t count) : capacity_(count == 0 ? 1 : count) {}
    transfer_slots(transfer_slots const&) = delete;
    transfer_slots& operator=(transfer_slots const&) = delete;

    /// A slot held until it is destroyed.
    class slot {
    public:
        explicit slot(transfer_slots* owner) : owner_(owner) {}
        slot(slot&& other) noexcept : owner_(other.owner_) { other.owner_ = nullptr; }
        slot& operator=(slot&&) = delete;
        ~slot() {
            if (owner_ != nullptr)
                owner_->release();
        }

    private:
        transfer_slots* owner_;
    };

    /// Waits, first come first served, for a free slot. Cancelling the waiting coroutine
    /// leaves the queue (operation_aborted is thrown, as by any cancelled operation).
    awaitable<slot> acquire();

    /// Changes the cap (a reloaded configuration); slots held above it stay until freed.
    void resize(std::size_t count);

    std::size_t in_use() const { return in_use_; }
    std::size_t waiting() const { return queue_.size(); }

private:
    struct waiter;
    void release();
    void grant();

    std::size_t capacity_;
    std::size_t in_use_ = 0;
    std::deque<waiter*> queue_;
};

} // namespace mirror::sync
