#pragma once
// The confinement of a catalog reader process (docs/design.md, "The catalog sandbox"):
// what DuckDB may still do once it holds a hostile catalog.

#include "verify/error.hpp"

#include <cstdint>

namespace mirror::catalog {

struct sandbox_limits {
    /// RLIMIT_AS, in bytes; 0 leaves it unset (a sanitizer's shadow memory needs terabytes
    /// of address space, so sanitized builds rely on DuckDB's memory limit alone).
    std::uint64_t address_space = 0;
    /// RLIMIT_CPU, in seconds of the process's whole life (soft and hard alike); 0: unset.
    std::uint64_t cpu_seconds = 0;
};

/// Confines the calling process for the rest of its life, in this order: the limits, then
/// PR_SET_NO_NEW_PRIVS, then a seccomp filter. The filter answers EPERM (so that DuckDB
/// fails with an error rather than a mystery) to: making sockets, connecting, binding and
/// accepting; exec; making processes (threads are allowed); signalling or tracing any
/// other process; opening a file for writing, creating, renaming, linking or removing
/// one; changing limits, mounts, namespaces and privileges; io_uring, bpf, perf and key
/// rings. Reading files stays allowed (DuckDB opens its catalog by path, and the libraries
/// read /proc and /sys), as do the descriptors it already has. A call of another
/// architecture kills the process. Fails with catalog_errc::reader_crashed when a step
/// cannot be taken: a reader that cannot be confined does not read.
result<void> enter_catalog_sandbox(sandbox_limits const& limits);

} // namespace mirror::catalog
