#pragma once
// The confinement of a catalog reader process (docs/design.md, "The catalog sandbox"):
// what a reader may still do once DuckDB holds a hostile catalog, and an exploit of DuckDB
// may be running in it. Confined by allow-list: a short list of what it may do, and
// nothing else.

#include "verify/error.hpp"

#include <cstdint>
#include <string>

namespace mirror::catalog {

struct sandbox_limits {
    /// RLIMIT_AS, in bytes; 0 leaves it unset (a sanitizer's shadow memory needs terabytes
    /// of address space, so sanitized builds rely on DuckDB's memory limit alone).
    std::uint64_t address_space = 0;
    /// RLIMIT_CPU, in seconds of the process's whole life (soft and hard alike); 0: unset.
    std::uint64_t cpu_seconds = 0;
    /// The size of the private root's tmpfs, which holds the copies of the catalogs of
    /// one request (the parent sends no larger batch).
    std::uint64_t scratch_bytes = std::uint64_t{1} << 30;
};

/// How a reader was confined.
struct sandbox_state {
    /// Its own user, mount, network, IPC, UTS and cgroup namespaces, and an empty root
    /// (detail::private_catalogs is its only folder): the host's files, processes,
    /// network and IPC are out of reach.
    bool private_root = false;
    /// Why not, when not: what the kernel or a service's own filter refused.
    std::string why_not;
    /// The Landlock ABI it confined itself with; 0 when the kernel has none.
    int landlock_abi = 0;
};

/// Confines the calling single-threaded process for the rest of its life, in this order:
/// a user of its own when it runs as root; namespaces with an empty root where the kernel
/// allows them; every capability dropped; not dumpable (no one of its user can ptrace it
/// or read its /proc); killed when its parent dies (`parent` must still be its parent
/// once that is set); its limits (address space, CPU, no core); Landlock (only
/// detail::private_catalogs, when it has a private root); no new privileges; and an
/// allow-list seccomp filter whose default kills the process
/// (detail/syscall_allow_list.hpp). Fails with catalog_errc::reader_crashed when a step
/// cannot be taken: a reader that cannot be confined does not read. A reader without a
/// private root must call confine_reads_to() before it reads anything.
result<sandbox_state> enter_catalog_sandbox(sandbox_limits const& limits, int parent);

/// For a reader without a private root: reads beneath `folder` only, through Landlock
/// where the kernel has it (then `state.landlock_abi` is set); nothing when it has none.
result<void> confine_reads_to(std::string const& folder, sandbox_state& state);

/// What a reader started now by this process would get, said in one line for
/// `--version`, `check-config` and the daemon's start ("namespaces, Landlock ABI 7,
/// seccomp allow-list" or "no namespaces (…): Landlock ABI 7, …"). Forks a child that
/// tries; costs about a millisecond.
std::string describe_catalog_sandbox();

} // namespace mirror::catalog
