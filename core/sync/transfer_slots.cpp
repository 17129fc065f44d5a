#include "core/sync/transfer_slots.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>

namespace mirror::sync {

// A queued coroutine sleeps on a timer that never expires; granting a slot cancels the
// timer, so "woken and granted" is told from "cancelled" by the flag.
struct transfer_slots::waiter {
    net::steady_timer timer;
    bool granted = false;
};

awaitable<transfer_slots::slot> transfer_slots::acquire() {
    if (in_use_ < capacity_ && queue_.empty()) {
        ++in_use_;
        co_return slot(this);
    }
    auto executor = co_await net::this_coro::executor;
    waiter me{net::steady_timer(executor, net::steady_timer::time_point::max())};
    queue_.push_back(&me);
    co_await me.timer.async_wait(use_op);
    if (!me.granted) {
        std::erase(queue_, &me);
        throw boost::system::system_error(net::error::operation_aborted, "waiting for a transfer slot");
    }
    co_return slot(this);
}

void transfer_slots::resize(std::size_t count) {
    capacity_ = count == 0 ? 1 : count;
    grant();
}

void transfer_slots::release() {
    --in_use_;
    grant();
}

void transfer_slots::grant() {
    while (in_use_ < capacity_ && !queue_.empty()) {
        waiter* next = queue_.front();
        queue_.pop_front();
        next->granted = true;
        ++in_use_;
        next->timer.cancel();
    }
}

} // namespace mirror::sync
