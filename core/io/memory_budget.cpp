#include "core/io/memory_budget.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>

namespace mirror::io {

// A queued coroutine sleeps on a timer that never expires; a grant cancels the timer, so
// "woken and granted" is told from "cancelled" by the flag.
struct memory_budget::waiter {
    net::steady_timer timer;
    std::uint64_t bytes;
    bool granted = false;
};

awaitable<memory_budget::grant> memory_budget::acquire(std::uint64_t bytes) {
    bytes = std::min(bytes, capacity_);
    if (queue_.empty() && in_use_ + bytes <= capacity_) {
        take(bytes);
        co_return grant(this, bytes);
    }
    auto executor = co_await net::this_coro::executor;
    waiter me{net::steady_timer(executor, net::steady_timer::time_point::max()), bytes};
    queue_.push_back(&me);
    co_await me.timer.async_wait(use_op);
    if (!me.granted) {
        std::erase(queue_, &me);
        grant_waiters(); // the head of the queue may have been the one waiting
        throw boost::system::system_error(net::error::operation_aborted, "waiting for its turn");
    }
    co_return grant(this, me.bytes);
}

memory_budget::grant memory_budget::try_acquire(std::uint64_t bytes, std::uint64_t ceiling) {
    if (!queue_.empty() || in_use_ + bytes > std::min(ceiling, capacity_))
        return grant();
    take(bytes);
    return grant(this, bytes);
}

void memory_budget::resize(std::uint64_t bytes) {
    capacity_ = bytes == 0 ? 1 : bytes;
    for (auto* w : queue_)
        w->bytes = std::min(w->bytes, capacity_);
    grant_waiters();
}

void memory_budget::release(std::uint64_t bytes) {
    in_use_ -= std::min(bytes, in_use_);
    grant_waiters();
}

void memory_budget::take(std::uint64_t bytes) {
    in_use_ += bytes;
    peak_ = std::max(peak_, in_use_);
}

void memory_budget::grant_waiters() {
    // In order: a large request at the head is not overtaken by small ones, so it cannot
    // starve.
    while (!queue_.empty() && in_use_ + queue_.front()->bytes <= capacity_) {
        waiter* next = queue_.front();
        queue_.pop_front();
        next->granted = true;
        take(next->bytes);
        next->timer.cancel();
    }
}

awaitable<memory_budget::grant> draw(memory_budget* budget, std::uint64_t bytes) {
    if (budget == nullptr)
        co_return memory_budget::grant();
    auto granted = co_await budget->acquire(bytes);
    co_return granted;
}

read_buffer take_read_buffer(memory_budget* budget, std::size_t bytes, std::size_t floor, std::uint64_t charge) {
    if (bytes <= floor || budget == nullptr)
        return {memory_budget::grant(), bytes};
    auto granted = budget->try_acquire(charge, budget->capacity() / 2);
    if (!granted)
        return {memory_budget::grant(), floor};
    return {std::move(granted), bytes};
}

} // namespace mirror::io
