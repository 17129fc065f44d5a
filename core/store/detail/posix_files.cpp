#include "core/store/detail/posix_files.hpp"

#include "core/io/errors.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mirror::store::detail {

unique_fd& unique_fd::operator=(unique_fd&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0)
            ::close(fd_);
        fd_ = other.release();
    }
    return *this;
}

unique_fd::~unique_fd() {
    if (fd_ >= 0)
        ::close(fd_);
}

error errno_error(int err, std::string const& what) {
    io::store_errc code = io::store_errc::io_error;
    std::string reason = std::strerror(err);
    switch (err) {
    case ENOENT: code = io::store_errc::not_found, reason = "not found"; break;
    case EEXIST: code = io::store_errc::already_exists, reason = "already exists"; break;
    case EACCES:
    case EPERM: code = io::store_errc::access_denied; break;
    case ELOOP: code = io::store_errc::not_a_file, reason = "is a symbolic link (links are not followed)"; break;
    case ENOTDIR: code = io::store_errc::not_a_file, reason = "a path component is not a folder"; break;
    case EISDIR: code = io::store_errc::not_a_file, reason = "is a folder, not a file"; break;
    // A name this file system cannot hold: the key is refused, the medium is fine.
    case ENAMETOOLONG: code = io::store_errc::rejected, reason = "name too long for this file system"; break;
    case EINTR:
    case EAGAIN:
    case EBUSY:
    case ETIMEDOUT: code = io::store_errc::transient; break;
    default: break; // ENOSPC, EIO, EROFS, EDQUOT…: permanent until someone acts
    }
    return make_error(code, what + ": " + reason);
}

result<std::vector<std::string>> split_key(std::string_view key, std::string const& store_name) {
    std::vector<std::string> segments;
    std::size_t start = 0;
    while (true) {
        std::size_t slash = key.find('/', start);
        std::string_view segment = key.substr(start, slash == std::string_view::npos ? slash : slash - start);
        if (segment.empty() || segment == "." || segment == ".." || segment.find('\0') != std::string_view::npos)
            return make_error(io::store_errc::rejected, store_name + ": unsafe key '" + std::string(key) + "'");
        segments.emplace_back(segment);
        if (slash == std::string_view::npos)
            break;
        start = slash + 1;
    }
    return segments;
}

static bool is_link(int dir_fd, char const* name) {
    struct stat st {};
    return ::fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

result<unique_fd> open_folder(int root_fd, std::vector<std::string> const& segments, bool create,
                              std::string const& what) {
    unique_fd current(::dup(root_fd));
    if (!current)
        return errno_error(errno, what);
    for (auto const& segment : segments) {
        int fd = ::openat(current.get(), segment.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT && create) {
            if (::mkdirat(current.get(), segment.c_str(), 0755) != 0 && errno != EEXIST)
                return errno_error(errno, what);
            fd = ::openat(current.get(), segment.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (fd < 0) {
            int err = errno;
            if ((err == ELOOP || err == ENOTDIR) && is_link(current.get(), segment.c_str()))
                err = ELOOP;
            return errno_error(err, what);
        }
        current = unique_fd(fd);
    }
    return current;
}

} // namespace mirror::store::detail
