#pragma once
// One budget of bytes for a whole process (the daemon's or a command's `memory_limit`):
// the buffers that data in flight needs (S3 parts, the look-ahead of passes) are granted
// from it, and work that finds it spent waits for bytes to come back instead of
// allocating past it. Used on one I/O thread (every pass runs there). Counted in units,
// it also caps transfers and passes (sync::transfer_slots: one unit a slot).

#include "core/io/net.hpp"

#include <cstdint>
#include <deque>

namespace mirror::io {

class memory_budget {
public:
    explicit memory_budget(std::uint64_t bytes) : capacity_(bytes == 0 ? 1 : bytes) {}
    memory_budget(memory_budget const&) = delete;
    memory_budget& operator=(memory_budget const&) = delete;

    /// Bytes held until the grant is destroyed (or moved from).
    class grant {
    public:
        grant() = default;
        grant(memory_budget* owner, std::uint64_t bytes) : owner_(owner), bytes_(bytes) {}
        grant(grant&& other) noexcept : owner_(other.owner_), bytes_(other.bytes_) { other.owner_ = nullptr; }
        grant& operator=(grant&& other) noexcept {
            if (this != &other) {
                reset();
                owner_ = other.owner_;
                bytes_ = other.bytes_;
                other.owner_ = nullptr;
            }
            return *this;
        }
        ~grant() { reset(); }
        std::uint64_t bytes() const { return owner_ != nullptr ? bytes_ : 0; }
        explicit operator bool() const { return owner_ != nullptr; }
        void reset() {
            if (owner_ != nullptr)
                owner_->release(bytes_);
            owner_ = nullptr;
        }

    private:
        memory_budget* owner_ = nullptr;
        std::uint64_t bytes_ = 0;
    };

    /// Waits, first come first served, until `bytes` are free, and takes them. A request
    /// larger than the whole budget is cut to the budget (it then runs alone). Cancelling
    /// the waiting coroutine leaves the queue (operation_aborted is thrown).
    awaitable<grant> acquire(std::uint64_t bytes);

    /// Takes `bytes` now if nobody waits and, with them, no more than `ceiling` is in use;
    /// an empty grant otherwise.
    grant try_acquire(std::uint64_t bytes, std::uint64_t ceiling);

    /// Changes the budget (a reloaded configuration); grants above it stay until freed.
    void resize(std::uint64_t bytes);

    std::uint64_t capacity() const { return capacity_; }
    std::uint64_t in_use() const { return in_use_; }
    std::uint64_t peak() const { return peak_; } ///< the most ever granted at once
    std::size_t waiting() const { return queue_.size(); }

private:
    struct waiter;
    void release(std::uint64_t bytes);
    void grant_waiters();
    void take(std::uint64_t bytes);

    std::uint64_t capacity_;
    std::uint64_t in_use_ = 0;
    std::uint64_t peak_ = 0;
    std::deque<waiter*> queue_;
};

/// Takes `bytes` from `budget` when there is one; an empty grant otherwise.
awaitable<memory_budget::grant> draw(memory_budget* budget, std::uint64_t bytes);

/// The buffer a read streams through. Past `floor`, its `charge` (what `bytes` of buffer
/// cost, all buffers counted) is granted only while half the budget is free, and never
/// waited for: a read may be feeding a writer that waits for budget itself, so waiting
/// could close a circle. Without room, `bytes` is `floor`, outside the budget: the least
/// every transfer needs to make progress.
struct read_buffer {
    memory_budget::grant granted;
    std::size_t bytes = 0;
};
read_buffer take_read_buffer(memory_budget* budget, std::size_t bytes, std::size_t floor, std::uint64_t charge);

} // namespace mirror::io
