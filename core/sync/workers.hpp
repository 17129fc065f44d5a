#pragma once
// A fixed number of worker coroutines on the caller's executor (docs/development.md,
// "Asynchrony and threads": workers are plain coroutines pulling from shared work, bounded by a fixed count).

#include "core/io/net.hpp"

#include <cstddef>
#include <functional>

namespace mirror::sync {

/// Starts `count` runs of `worker` on the caller's executor and returns when every one
/// has returned. Each run pulls its work from state the caller owns (all on the I/O
/// thread). An exception that escapes a worker is rethrown here after all have finished.
/// `worker` is a named function of the caller, which co_awaits this at once.
awaitable<void> run_workers(std::size_t count, std::function<awaitable<void>()>& worker);

} // namespace mirror::sync
