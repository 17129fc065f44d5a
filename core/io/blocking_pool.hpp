#pragma once
// Threads for blocking file system calls, so that the I/O thread keeps hashing and
// driving other transfers while a read, write or fsync waits on the disk.

#include "core/io/net.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace mirror::io {

/// A small pool of threads that run blocking work and resume the awaiting coroutine on
/// its own executor. The work must touch only what it owns (its descriptors and buffers):
/// all shared state stays on the I/O thread. Destruction joins the threads.
class blocking_pool {
public:
    explicit blocking_pool(std::size_t threads);
    ~blocking_pool();
    blocking_pool(blocking_pool const&) = delete;
    blocking_pool& operator=(blocking_pool const&) = delete;

    /// Runs `work` on a pool thread; resumes the caller on its executor when it is done.
    /// Takes a reference to the caller's named function, which it co_awaits at once (no
    /// temporaries in co_await expressions: see docs/design.md, "Coroutines and GCC 12").
    /// An exception thrown by `work` is rethrown here.
    awaitable<void> run(std::function<void()>& work);

    /// How many pieces of work run has started, since the pool was made (for tests).
    std::uint64_t runs() const;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

/// Runs `work` on `pool` when there is one, inline otherwise.
awaitable<void> run_blocking(blocking_pool* pool, std::function<void()>& work);

} // namespace mirror::io
