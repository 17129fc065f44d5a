#pragma once
// One writer per folder mirror: two passes into the same mirror at once could move a
// branch back (each writes the refs it decided on), so a pass holds a lock. A daemon holds
// one on its state folder the same way.

#include "verify/error.hpp"

#include <functional>
#include <optional>
#include <string>

namespace mirror::daemon {

/// An exclusive advisory lock (flock) on `.fdl-mirror/lock` in a folder mirror, held
/// until destruction. Readers of the mirror ignore `.fdl-mirror/`.
class mirror_lock {
public:
    /// Takes the lock of the folder at `root` without waiting. nullopt with `problem` set
    /// when another process holds it or the lock file cannot be made. Creates nothing
    /// through a symbolic link: `.fdl-mirror` and its `lock` must be a folder and a file.
    static std::optional<mirror_lock> take(std::string const& root, std::string& problem);
    /// Takes an exclusive lock on the file at `path` (made if missing) without waiting.
    /// nullopt with `problem` set to `in_use` when another holder has it (another process,
    /// or another open of the same file), or to the path and the reason.
    static std::optional<mirror_lock> take_file(std::string const& path, std::string const& in_use,
                                                std::string& problem);
    mirror_lock(mirror_lock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
    mirror_lock& operator=(mirror_lock&& other) noexcept;
    ~mirror_lock();

private:
    explicit mirror_lock(int fd) : fd_(fd) {}
    /// Locks the open `fd` (closing it on failure).
    static std::optional<mirror_lock> lock_fd(int fd, std::string const& path, std::string const& in_use,
                                              std::string& problem);
    int fd_;
};

/// The folder a location names when it is a folder or file:// URL; nullopt otherwise.
std::optional<std::string> folder_of(std::string const& location);

/// For sync_options::before_first_write: takes the lock of the folder mirror at
/// `location` into `lock` (which must outlive the pass); empty for other stores. The step
/// fails with store_errc::io_error naming the reason (another sync holds it, or
/// `.fdl-mirror` is a link or cannot be made).
std::function<result<void>()> folder_lock_step(std::string const& location, std::optional<mirror_lock>& lock);

} // namespace mirror::daemon
