#pragma once
// Blocking reads and writes on the socket between a process and a catalog reader, with
// file descriptors passed alongside (SCM_RIGHTS) and an optional deadline.

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mirror::catalog::detail {

using deadline = std::optional<std::chrono::steady_clock::time_point>;

enum class socket_outcome { done, closed, timed_out, failed };

/// Writes all of `bytes` on `fd`, with `fds` passed beside the first of them. Never raises
/// SIGPIPE: a peer that is gone gives `closed`.
socket_outcome send_frame(int fd, std::string_view bytes, std::vector<int> const& fds, deadline until);

/// Reads exactly `size` bytes into `out`. Descriptors that arrive with them are appended
/// to `fds` when it is given (and closed otherwise: a peer cannot leave any open here).
/// A peer that closes before the first byte, or part-way, gives `closed`.
socket_outcome receive_exact(int fd, std::size_t size, std::string& out, std::vector<int>* fds, deadline until);

/// Closes every descriptor of `fds` and empties it.
void close_all(std::vector<int>& fds);

} // namespace mirror::catalog::detail
