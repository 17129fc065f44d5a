#include "core/io/blocking_pool.hpp"

#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/thread_pool.hpp>

#include <atomic>
#include <exception>

namespace mirror::io {

struct blocking_pool::impl {
    explicit impl(std::size_t threads) : pool(threads) {}
    net::thread_pool pool;
    std::atomic<std::uint64_t> runs{0};
};

blocking_pool::blocking_pool(std::size_t threads) : impl_(std::make_unique<impl>(threads)) {}

blocking_pool::~blocking_pool() {
    impl_->pool.join();
}

std::uint64_t blocking_pool::runs() const { return impl_->runs.load(std::memory_order_relaxed); }

awaitable<void> blocking_pool::run(std::function<void()>& work) {
    impl_->runs.fetch_add(1, std::memory_order_relaxed);
    auto home = co_await net::this_coro::executor;
    std::exception_ptr failure;
    auto initiate = [this, home, &work, &failure](auto handler) {
        net::post(impl_->pool, [home, &work, &failure, handler = std::move(handler)]() mutable {
            try {
                work();
            } catch (...) {
                failure = std::current_exception();
            }
            net::post(home, std::move(handler)); // resume on the I/O thread
        });
    };
    co_await net::async_initiate<decltype(net::use_awaitable), void()>(initiate, net::use_awaitable);
    if (failure)
        std::rethrow_exception(failure);
}

awaitable<void> run_blocking(blocking_pool* pool, std::function<void()>& work) {
    if (pool == nullptr) {
        work();
        co_return;
    }
    co_await pool->run(work);
}

} // namespace mirror::io
