#include "core/sync/workers.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <exception>

namespace mirror::sync {

awaitable<void> run_workers(std::size_t count, std::function<awaitable<void>()>& worker) {
    if (count == 0)
        co_return;
    auto executor = co_await net::this_coro::executor;
    // Waits "forever"; the last worker to finish cancels it.
    net::steady_timer all_done(executor, net::steady_timer::time_point::max());
    std::size_t running = count;
    std::exception_ptr first_failure;
    for (std::size_t i = 0; i < count; ++i)
        net::co_spawn(executor, worker(), [&](std::exception_ptr failure) {
            if (failure && !first_failure)
                first_failure = failure;
            if (--running == 0)
                all_done.cancel();
        });
    while (running != 0)
        co_await all_done.async_wait(use_op);
    if (first_failure)
        std::rethrow_exception(first_failure);
}

} // namespace mirror::sync
