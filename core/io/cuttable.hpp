#pragma once
// Work that can be cut: it runs as a coroutine of its own, bound to a cancellation signal,
// so that a deadline or a shutdown ends it at its next operation while the caller waits
// for it to end. The daemon's passes and audits, its wait for a pass slot and the
// commands' --deadline all run this way (docs/development.md, "Asynchrony and threads").

#include "core/io/net.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <exception>
#include <optional>

namespace mirror::io {

/// How cuttable work ended.
template <class T>
struct cuttable_end {
    std::optional<T> value;     ///< what it returned; empty when it threw
    std::exception_ptr failure; ///< what escaped it: a bug, or the error a cut raised
    bool limit_reached = false; ///< the time limit cut it
};

/// Runs `work` on `executor`, bound to `cut`: emitting `cut` ends it at its next
/// operation. With a `limit`, `cut` is emitted (terminal) once it has run that long.
/// Returns once the work has ended, however it ended.
template <class T>
awaitable<cuttable_end<T>> run_cuttable(net::any_io_executor executor, awaitable<T> work,
                                        net::cancellation_signal& cut,
                                        std::optional<std::chrono::milliseconds> limit = std::nullopt) {
    cuttable_end<T> end;
    bool done = false;
    net::steady_timer until_done(executor, net::steady_timer::time_point::max());
    net::steady_timer deadline(executor, net::steady_timer::time_point::max());
    if (limit) {
        deadline.expires_after(*limit);
        deadline.async_wait([&](boost::system::error_code ec) {
            if (!ec && !done) { // a cancelled wait reads nothing: this frame may be gone by then
                end.limit_reached = true;
                cut.emit(net::cancellation_type::terminal);
            }
        });
    }
    net::co_spawn(executor, std::move(work), net::bind_cancellation_slot(cut.slot(), [&](std::exception_ptr e, T out) {
                      end.failure = e;
                      if (!e)
                          end.value.emplace(std::move(out)); // emplaced: some results move but never assign
                      done = true;
                      until_done.cancel();
                  }));
    while (!done)
        co_await until_done.async_wait(use_op);
    deadline.cancel();
    cut.slot().clear();
    co_return end;
}

} // namespace mirror::io
