#include "core/catalog/detail/worker_socket.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace mirror::catalog::detail {

namespace {

/// The most descriptors one message carries: a request's catalogs (catalog_readers batches
/// at most 8).
constexpr std::size_t max_fds = 64;

/// Waits until `fd` is ready for `events`; false past the deadline.
bool wait_ready(int fd, short events, deadline until, bool& failed) {
    for (;;) {
        int timeout = -1;
        if (until) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*until - std::chrono::steady_clock::now());
            if (left.count() <= 0)
                return false;
            timeout = static_cast<int>(std::min<long long>(left.count() + 1, 60'000));
        }
        pollfd p{fd, events, 0};
        int n = ::poll(&p, 1, timeout);
        if (n > 0)
            return true;
        if (n < 0 && errno != EINTR) {
            failed = true;
            return true;
        }
    }
}

} // namespace

socket_outcome send_frame(int fd, std::string_view bytes, std::vector<int> const& fds, deadline until) {
    std::size_t sent = 0;
    bool with_fds = !fds.empty();
    while (sent < bytes.size()) {
        bool failed = false;
        if (!wait_ready(fd, POLLOUT, until, failed))
            return socket_outcome::timed_out;
        if (failed)
            return socket_outcome::failed;
        iovec io{const_cast<char*>(bytes.data() + sent), bytes.size() - sent};
        msghdr msg{};
        msg.msg_iov = &io;
        msg.msg_iovlen = 1;
        std::array<char, CMSG_SPACE(sizeof(int) * max_fds)> control{};
        if (with_fds) {
            std::size_t n = std::min(fds.size(), max_fds);
            msg.msg_control = control.data();
            msg.msg_controllen = CMSG_SPACE(sizeof(int) * n);
            cmsghdr* c = CMSG_FIRSTHDR(&msg);
            c->cmsg_level = SOL_SOCKET;
            c->cmsg_type = SCM_RIGHTS;
            c->cmsg_len = CMSG_LEN(sizeof(int) * n);
            std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * n);
        }
        ssize_t n = ::sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            return errno == EPIPE || errno == ECONNRESET ? socket_outcome::closed : socket_outcome::failed;
        }
        with_fds = false; // they went with the first bytes
        sent += static_cast<std::size_t>(n);
    }
    return socket_outcome::done;
}

socket_outcome receive_exact(int fd, std::size_t size, std::string& out, std::vector<int>* fds, deadline until) {
    out.resize(size);
    std::size_t got = 0;
    while (got < size) {
        bool failed = false;
        if (!wait_ready(fd, POLLIN, until, failed))
            return socket_outcome::timed_out;
        if (failed)
            return socket_outcome::failed;
        iovec io{out.data() + got, size - got};
        msghdr msg{};
        msg.msg_iov = &io;
        msg.msg_iovlen = 1;
        std::array<char, CMSG_SPACE(sizeof(int) * max_fds)> control{};
        msg.msg_control = control.data();
        msg.msg_controllen = control.size();
        ssize_t n = ::recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            return errno == ECONNRESET ? socket_outcome::closed : socket_outcome::failed;
        }
        for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
            if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                continue;
            std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (std::size_t i = 0; i < count; ++i) {
                int received = -1;
                std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                if (fds != nullptr)
                    fds->push_back(received);
                else
                    ::close(received);
            }
        }
        if (n == 0)
            return socket_outcome::closed;
        got += static_cast<std::size_t>(n);
    }
    return socket_outcome::done;
}

void close_all(std::vector<int>& fds) {
    for (int fd : fds)
        ::close(fd);
    fds.clear();
}

} // namespace mirror::catalog::detail
