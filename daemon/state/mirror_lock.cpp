#include "daemon/state/mirror_lock.hpp"

#include "core/io/errors.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mirror::daemon {

std::optional<mirror_lock> mirror_lock::take(std::string const& root, std::string& problem) {
    // The mirror's own folder may be a link (the operator named it); what is made inside
    // never goes through one: each step is relative to the folder opened before it.
    std::string folder = (std::filesystem::path(root) / ".fdl-mirror").string();
    int top = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (top < 0) {
        problem = root + ": " + std::strerror(errno);
        return std::nullopt;
    }
    if (::mkdirat(top, ".fdl-mirror", 0755) != 0 && errno != EEXIST) {
        problem = folder + ": " + std::strerror(errno);
        ::close(top);
        return std::nullopt;
    }
    int inner = ::openat(top, ".fdl-mirror", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int err = errno;
    ::close(top);
    if (inner < 0) {
        problem = folder + ": " +
                  (err == ELOOP || err == ENOTDIR ? std::string("not a folder (links are not followed)")
                                                  : std::string(std::strerror(err)));
        return std::nullopt;
    }
    std::string path = folder + "/lock";
    int fd = ::openat(inner, "lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    err = errno;
    ::close(inner);
    if (fd < 0) {
        problem = path + ": " +
                  (err == ELOOP ? std::string("is a link (links are not followed)") : std::string(std::strerror(err)));
        return std::nullopt;
    }
    return lock_fd(fd, path, root + ": another fdl-mirror sync is writing this mirror (" + path + ")", problem);
}

std::optional<mirror_lock> mirror_lock::lock_fd(int fd, std::string const& path, std::string const& in_use,
                                                std::string& problem) {
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int err = errno;
        ::close(fd);
        problem = err == EWOULDBLOCK ? in_use : path + ": " + std::strerror(err);
        return std::nullopt;
    }
    return mirror_lock(fd);
}

std::optional<mirror_lock> mirror_lock::take_file(std::string const& path, std::string const& in_use,
                                                  std::string& problem) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
        problem = path + ": " + std::strerror(errno);
        return std::nullopt;
    }
    return lock_fd(fd, path, in_use, problem);
}

mirror_lock& mirror_lock::operator=(mirror_lock&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0)
            ::close(fd_);
        fd_ = other.fd_;
        other.fd_ = -1;
    }
    return *this;
}

mirror_lock::~mirror_lock() {
    if (fd_ >= 0)
        ::close(fd_); // releases the lock
}

std::function<result<void>()> folder_lock_step(std::string const& location, std::optional<mirror_lock>& lock) {
    auto folder = folder_of(location);
    if (!folder)
        return {};
    return [folder = *folder, &lock]() -> result<void> {
        std::string problem;
        lock = mirror_lock::take(folder, problem);
        if (!lock)
            return make_error(io::store_errc::io_error, "mirror: " + problem);
        return {};
    };
}

std::optional<std::string> folder_of(std::string const& location) {
    if (location.starts_with("file://"))
        return location.substr(7);
    if (location.find("://") == std::string::npos)
        return location;
    return std::nullopt;
}

} // namespace mirror::daemon
