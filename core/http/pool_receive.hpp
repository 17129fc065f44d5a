#pragma once
// Receiving a large body's bytes on a pool thread instead of the I/O thread: the copy out
// of the kernel is most of what receiving costs, and one I/O thread doing it for every
// transfer kept one core busy while the other hashed (docs/benchmarks.md, "The floor on
// this machine"). The pool thread reads only what is there already, without blocking,
// and waits for more only briefly, so that a slow server never holds a pool thread: the
// I/O thread waits for it instead.

#include <chrono>
#include <cstddef>
#include <span>

namespace mirror::http {

/// What one trip of receive_available got.
struct received_bytes {
    std::size_t bytes = 0; ///< put at the start of the span
    bool closed = false;   ///< the peer closed the connection
    int error = 0;         ///< errno of a failed read, 0 when none
};

/// Reads from `socket` into `into` until it is full, the peer closes, a read fails, no
/// byte comes for `quiet`, or `longest` has passed. Never blocks longer than that.
received_bytes receive_available(int socket, std::span<char> into, std::chrono::milliseconds quiet,
                                 std::chrono::milliseconds longest);

/// Waits at most `how_long` for `socket` to have bytes (or a close or error) to read;
/// false when it has not.
bool wait_readable(int socket, std::chrono::steady_clock::duration how_long);

/// Whether at least one byte waits to be read on `socket` (read nothing).
bool bytes_waiting(int socket);

} // namespace mirror::http
