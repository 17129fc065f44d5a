#pragma once
// The parts of the catalog sandbox that take a process away from everything it could
// reach: its own user, namespaces with an empty root, no capabilities, and Landlock
// (docs/design.md, "The catalog sandbox"). Linux only; each step is a plain system call.

#include <sys/types.h>

#include <string>

namespace mirror::catalog::detail {

/// Where a reader with a private root finds its catalogs: the one folder of its empty
/// root, on its own tmpfs.
inline constexpr char const* private_catalogs = "/catalogs";

/// A uid (and gid) of its own for a reader started by root: above every range that
/// Debian gives accounts, systemd's dynamic users and container id maps, and different
/// for each reader (derived from its pid), so that no process shares it.
uid_t reader_own_id(pid_t pid);

/// When the process runs as root, drops the capability bounding set, leaves every
/// supplementary group and becomes reader_own_id(getpid()). An error text, or empty.
std::string leave_root();

/// Whether a process that left root (leave_root) could still take namespaces: asked in a
/// forked child, since a process that left root cannot come back, and without namespaces
/// a reader that left root could not open its pass's folder (the parent's, 0700).
bool own_user_gets_namespaces();

/// Moves the calling single-threaded process into new user, mount, network, IPC, UTS and
/// cgroup namespaces whose root is an empty tmpfs of at most `scratch_bytes`, holding
/// only private_catalogs. `why_not` says why when the kernel (or a service's own filter)
/// refuses namespaces; the process is then unchanged and may fall back. Returns false
/// with `failed` set when a step after the namespaces failed: the process must not go
/// on.
bool enter_private_root(unsigned long long scratch_bytes, std::string& why_not, std::string& failed);

/// What isolate_reader got: a private root, or why not (the process may fall back), or
/// a step that failed half-way (the process must not go on).
struct isolation {
    bool private_root = false;
    std::string why_not;
    std::string failed;
};

/// The reader's first step, and the probe's that --version reports: leaves root for a
/// user of its own when that user may take namespaces (else root stays, to be stripped
/// of its capabilities later), then enters the private root (enter_private_root).
isolation isolate_reader(unsigned long long scratch_bytes);

/// Drops every capability: the bounding set, the ambient set, and the permitted,
/// effective and inheritable sets; locks the securebits so that uid 0 gives none back.
/// An error text, or empty.
std::string drop_capabilities();

/// The Landlock ABI this kernel offers; 0 when it has none (or a filter refuses it).
int landlock_abi();

/// Confines file access with Landlock: reading (files and folders) beneath `read_root`,
/// and, when `writable`, making, writing and removing regular files there too; nothing
/// elsewhere. Where the kernel's ABI has scopes (6 and later), signals to processes
/// outside the domain and abstract UNIX sockets are refused too. An error text, or
/// empty; "unsupported" when the kernel has no Landlock.
std::string landlock_confine(std::string const& read_root, bool writable);

} // namespace mirror::catalog::detail
