#pragma once
// Private to local_store: descriptor ownership, key walking without following links,
// and errno classification.

#include "verify/error.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace mirror::store::detail {

/// Owns one file descriptor.
class unique_fd {
public:
    unique_fd() = default;
    explicit unique_fd(int fd) : fd_(fd) {}
    unique_fd(unique_fd&& other) noexcept : fd_(other.release()) {}
    unique_fd& operator=(unique_fd&& other) noexcept;
    unique_fd(unique_fd const&) = delete;
    unique_fd& operator=(unique_fd const&) = delete;
    ~unique_fd();
    int get() const { return fd_; }
    int release() { int fd = fd_; fd_ = -1; return fd; }
    explicit operator bool() const { return fd_ >= 0; }

private:
    int fd_ = -1;
};

/// Maps an errno from an operation on `what` to a store error, once (docs/development.md, "Errors").
error errno_error(int err, std::string const& what);

/// Splits a key into segments, refusing empty, `.`, `..` segments and NUL bytes.
result<std::vector<std::string>> split_key(std::string_view key, std::string const& store_name);

/// Opens the folder made of `segments` below `root_fd`, one segment at a time with
/// O_NOFOLLOW, creating missing folders when `create` is set. `what` names it in errors.
result<unique_fd> open_folder(int root_fd, std::vector<std::string> const& segments, bool create,
                              std::string const& what);

} // namespace mirror::store::detail
