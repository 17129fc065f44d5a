#pragma once
// The system calls a catalog reader may make once it reads hostile bytes: an allow-list,
// found by tracing the reader over the catalog tests (docs/design.md, "The catalog
// sandbox", lists each call and why). Any other call kills the process (SIGSYS).

namespace mirror::catalog::detail {

/// What the filter lets a reader do with files, which depends on where it reads.
enum class file_access {
    /// The reader's root is its own empty tmpfs (namespaces): it may create, write and
    /// remove files there (its copies of the catalogs), and nothing else is reachable.
    private_root,
    /// The reader shares the host's file system (no namespaces): files are opened for
    /// reading only, and nothing is created, written, renamed or removed.
    read_only,
};

/// Loads the allow-list into the calling process (and its future threads) for the rest of
/// its life; PR_SET_NO_NEW_PRIVS must be set. 0, or a negative errno. A service's own
/// filter may refuse seccomp() itself while allowing prctl(): the same program is then
/// loaded through prctl(PR_SET_SECCOMP).
int load_syscall_allow_list(file_access access);

} // namespace mirror::catalog::detail
