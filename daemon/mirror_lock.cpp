#include "daemon/mirror_lock.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/file.h>
#include <unistd.h>

namespace mirror::daemon {

std::optional<mirror_lock> mirror_lock::take(std::string const& root, std::string& problem) {
    std::error_code ec;
    std::filesystem::path folder = std::filesystem::path(root) / ".fdl-mirror";
    std::filesystem::create_directories(folder, ec);
    if (ec) {
        problem = folder.string() + ": " + ec.message();
        return std::nullopt;
    }
    std::string path = (folder / "lock").string();
    return take_file(path, root + ": another fdl-mirror sync is writing this mirror (" + path + ")", problem);
}

std::optional<mirror_lock> mirror_lock::take_file(std::string const& path, std::string const& in_use,
                                                  std::string& problem) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
        problem = path + ": " + std::strerror(errno);
        return std::nullopt;
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int err = errno;
        ::close(fd);
        problem = err == EWOULDBLOCK ? in_use : path + ": " + std::strerror(err);
        return std::nullopt;
    }
    return mirror_lock(fd);
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

std::optional<std::string> folder_of(std::string const& location) {
    if (location.starts_with("file://"))
        return location.substr(7);
    if (location.find("://") == std::string::npos)
        return location;
    return std::nullopt;
}

} // namespace mirror::daemon
