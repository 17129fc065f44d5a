#include "core/sync/workers.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/system/system_error.hpp>

#include <exception>
#include <vector>

namespace mirror::sync {

awaitable<void> run_workers(std::size_t count, std::function<awaitable<void>()>& worker) {
    if (count == 0)
        co_return;
    auto executor = co_await net::this_coro::executor;
    // Waits "forever"; the last worker to finish cancels it.
    net::steady_timer all_done(executor, net::steady_timer::time_point::max());
    std::size_t running = count;
    std::exception_ptr first_failure;
    // Each worker can be cut when the caller is: the workers use this frame, so it must
    // not end before they do, whatever happens to the caller.
    std::vector<net::cancellation_signal> cut(count);
    for (std::size_t i = 0; i < count; ++i)
        net::co_spawn(executor, worker(), net::bind_cancellation_slot(cut[i].slot(), [&](std::exception_ptr failure) {
                          if (failure && !first_failure)
                              first_failure = failure;
                          if (--running == 0)
                              all_done.cancel();
                      }));
    co_await net::this_coro::throw_if_cancelled(false);
    bool forwarded = false;
    while (running != 0) {
        co_await all_done.async_wait(use_op);
        auto state = co_await net::this_coro::cancellation_state;
        if (!forwarded && state.cancelled() != net::cancellation_type::none) {
            forwarded = true;
            for (auto& signal : cut)
                signal.emit(net::cancellation_type::terminal);
        }
    }
    co_await net::this_coro::throw_if_cancelled(true);
    auto state = co_await net::this_coro::cancellation_state;
    if (forwarded || state.cancelled() != net::cancellation_type::none)
        throw boost::system::system_error(net::error::operation_aborted, "workers");
    if (first_failure)
        std::rethrow_exception(first_failure);
}

} // namespace mirror::sync
