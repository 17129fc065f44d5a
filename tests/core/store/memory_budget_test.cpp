#include "core/io/memory_budget.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

using namespace mirror;
using namespace std::chrono_literals;

namespace {

/// Takes `bytes`, notes when it has them ("name+N", N the bytes granted), holds them for
/// `hold`, and notes when it gives them back.
awaitable<void> buffer(io::memory_budget& budget, std::vector<std::string>& events, std::string name,
                       std::uint64_t bytes, std::chrono::milliseconds hold) {
    auto granted = co_await budget.acquire(bytes);
    events.push_back(name + "+" + std::to_string(granted.bytes()));
    net::steady_timer timer(co_await net::this_coro::executor, hold);
    co_await timer.async_wait(use_op);
    events.push_back(name + "-");
}

} // namespace

TEST_CASE("the memory budget grants what fits, and the rest waits its turn in order") {
    net::io_context io;
    io::memory_budget budget(100);
    std::vector<std::string> events;
    // a and b fit (60 + 40); c (50) waits for a; d (10) would fit beside c but comes
    // after it, so it waits too: a large request is never overtaken and starved.
    net::co_spawn(io, buffer(budget, events, "a", 60, 10ms), net::detached);
    net::co_spawn(io, buffer(budget, events, "b", 40, 40ms), net::detached);
    net::co_spawn(io, buffer(budget, events, "c", 50, 20ms), net::detached);
    net::co_spawn(io, buffer(budget, events, "d", 10, 5ms), net::detached);
    io.run();
    CHECK(events == std::vector<std::string>{"a+60", "b+40", "a-", "c+50", "d+10", "d-", "c-", "b-"});
    CHECK(budget.in_use() == 0);
    CHECK(budget.peak() == 100);
}

TEST_CASE("a request larger than the whole budget is cut to it and runs alone") {
    net::io_context io;
    io::memory_budget budget(100);
    std::vector<std::string> events;
    net::co_spawn(io, buffer(budget, events, "small", 30, 10ms), net::detached);
    net::co_spawn(io, buffer(budget, events, "huge", 500, 10ms), net::detached);
    io.run();
    CHECK(events == std::vector<std::string>{"small+30", "small-", "huge+100", "huge-"});
    CHECK(budget.peak() == 100);
}

TEST_CASE("a request cancelled while it waits leaves the queue, and the ones behind it go on") {
    net::io_context io;
    io::memory_budget budget(100);
    std::vector<std::string> events;
    net::co_spawn(io, buffer(budget, events, "holder", 80, 30ms), net::detached);
    net::cancellation_signal cut;
    bool ended = false;
    net::co_spawn(io, buffer(budget, events, "cut", 90, 1ms),
                  net::bind_cancellation_slot(cut.slot(), [&](std::exception_ptr) { ended = true; }));
    net::co_spawn(io, buffer(budget, events, "behind", 20, 1ms), net::detached);
    net::steady_timer later(io, 5ms);
    later.async_wait([&](auto) { cut.emit(net::cancellation_type::terminal); });
    io.run();
    CHECK(ended);
    // "behind" fits beside the holder once the large request ahead of it has gone.
    CHECK(events == std::vector<std::string>{"holder+80", "behind+20", "behind-", "holder-"});
    CHECK(budget.in_use() == 0);
}

TEST_CASE("a larger budget lets waiting requests in at once, a smaller one lets grants above it finish") {
    net::io_context io;
    io::memory_budget budget(50);
    std::vector<std::string> events;
    net::co_spawn(io, buffer(budget, events, "a", 50, 20ms), net::detached);
    net::co_spawn(io, buffer(budget, events, "b", 50, 5ms), net::detached);
    net::steady_timer grow(io, 5ms);
    grow.async_wait([&](auto) { budget.resize(100); });
    io.run();
    CHECK(events == std::vector<std::string>{"a+50", "b+50", "b-", "a-"});
    budget.resize(10);
    CHECK(budget.capacity() == 10);
    CHECK(budget.in_use() == 0);
}
