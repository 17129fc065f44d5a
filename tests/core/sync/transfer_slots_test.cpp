#include "core/sync/transfer_slots.hpp"
#include "core/sync/workers.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/system/system_error.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

using namespace mirror;
using namespace std::chrono_literals;

namespace {

/// Takes a slot, notes when it has it, holds it for `hold`, and notes when it lets go.
awaitable<void> transfer(sync::transfer_slots& slots, std::vector<std::string>& events, std::string name,
                         std::chrono::milliseconds hold) {
    auto slot = co_await slots.acquire();
    events.push_back(name + "+");
    net::steady_timer timer(co_await net::this_coro::executor, hold);
    co_await timer.async_wait(use_op);
    events.push_back(name + "-");
}

} // namespace

TEST_CASE("transfer slots let `count` transfers run at once, and the others in the order they asked") {
    net::io_context io;
    sync::transfer_slots slots(2);
    std::vector<std::string> events;
    for (auto name : {"a", "b", "c", "d"})
        net::co_spawn(io, transfer(slots, events, name, name == std::string("a") ? 10ms : 30ms), net::detached);
    io.run();
    // a and b start; a ends first and c takes its slot; then b ends and d starts.
    CHECK(events == std::vector<std::string>{"a+", "b+", "a-", "c+", "b-", "d+", "c-", "d-"});
    CHECK(slots.in_use() == 0);
}

TEST_CASE("a transfer cancelled while it waits for a slot leaves the queue and takes nothing") {
    net::io_context io;
    sync::transfer_slots slots(1);
    std::vector<std::string> events;
    net::co_spawn(io, transfer(slots, events, "holder", 30ms), net::detached);
    net::cancellation_signal cut;
    bool aborted = false;
    net::co_spawn(io, transfer(slots, events, "cut", 1ms), net::bind_cancellation_slot(cut.slot(), [&](std::exception_ptr e) {
                      try {
                          if (e)
                              std::rethrow_exception(e);
                      } catch (boost::system::system_error const& error) {
                          aborted = error.code() == net::error::operation_aborted;
                      }
                  }));
    net::co_spawn(io, transfer(slots, events, "next", 1ms), net::detached);
    net::steady_timer later(io, 5ms);
    later.async_wait([&](boost::system::error_code) {
        CHECK(slots.waiting() == 2);
        cut.emit(net::cancellation_type::terminal);
    });
    io.run();
    CHECK(aborted);
    CHECK(events == std::vector<std::string>{"holder+", "holder-", "next+", "next-"});
    CHECK(slots.in_use() == 0);
    CHECK(slots.waiting() == 0);
}

TEST_CASE("a larger cap after a reload lets waiting transfers start at once") {
    net::io_context io;
    sync::transfer_slots slots(1);
    std::vector<std::string> events;
    for (auto name : {"a", "b", "c"})
        net::co_spawn(io, transfer(slots, events, name, 20ms), net::detached);
    net::steady_timer later(io, 5ms);
    later.async_wait([&](boost::system::error_code) { slots.resize(3); });
    io.run();
    REQUIRE(events.size() == 6);
    CHECK(events[0] == "a+");
    CHECK(events[1] == "b+");
    CHECK(events[2] == "c+"); // both started before a ended
}

namespace {

/// Workers that each wait 10 ms per item of shared work, counting what they finish.
struct slow_work {
    std::size_t next = 0;
    std::size_t total = 0;
    std::size_t finished = 0;
    std::function<awaitable<void>()> worker = [this]() -> awaitable<void> {
        while (next < total) {
            ++next;
            net::steady_timer timer(co_await net::this_coro::executor, 10ms);
            co_await timer.async_wait(net::use_awaitable); // throws when cut
            ++finished;
        }
    };
};

awaitable<void> run_slow_work(slow_work& work, std::size_t workers) { co_await sync::run_workers(workers, work.worker); }

} // namespace

TEST_CASE("cutting run_workers cuts every worker, waits for all of them, then reports the cut") {
    net::io_context io;
    slow_work work;
    work.total = 1000;
    net::cancellation_signal cut;
    bool aborted = false;
    bool ended = false;
    net::co_spawn(io, run_slow_work(work, 4), net::bind_cancellation_slot(cut.slot(), [&](std::exception_ptr e) {
                      ended = true;
                      try {
                          if (e)
                              std::rethrow_exception(e);
                      } catch (boost::system::system_error const& error) {
                          aborted = error.code() == net::error::operation_aborted;
                      }
                  }));
    net::steady_timer later(io, 35ms);
    later.async_wait([&](boost::system::error_code) { cut.emit(net::cancellation_type::terminal); });
    io.run(); // returns only once nothing is left: no worker outlives run_workers
    CHECK(ended);
    CHECK(aborted);
    CHECK(work.finished < 100);
    CHECK(work.next < 100);
}

TEST_CASE("run_workers not cut runs every item") {
    net::io_context io;
    slow_work work;
    work.total = 12;
    net::co_spawn(io, run_slow_work(work, 4), net::detached);
    io.run();
    CHECK(work.finished == 12);
}
