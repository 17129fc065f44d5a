#include "core/http/pool_receive.hpp"

#include "core/http/tcp_options.hpp"

#include <cerrno>
#include <poll.h>
#include <sys/socket.h>

namespace mirror::http {

received_bytes receive_available(int socket, std::span<char> into, std::chrono::milliseconds quiet,
                                 std::chrono::milliseconds longest) {
    received_bytes out;
    auto const until = std::chrono::steady_clock::now() + longest;
    while (out.bytes < into.size()) {
        acknowledge_at_once(socket);
        ssize_t n = ::recv(socket, into.data() + out.bytes, into.size() - out.bytes, MSG_DONTWAIT);
        if (n > 0) {
            out.bytes += static_cast<std::size_t>(n);
            continue;
        }
        if (n == 0) {
            out.closed = true;
            break;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            out.error = errno;
            break;
        }
        auto const now = std::chrono::steady_clock::now();
        if (now >= until)
            break;
        if (!wait_readable(socket, std::min<std::chrono::steady_clock::duration>(quiet, until - now)))
            break; // quiet: the I/O thread waits for the rest
    }
    return out;
}

bool wait_readable(int socket, std::chrono::steady_clock::duration how_long) {
    pollfd one{socket, POLLIN, 0};
    int const milliseconds = static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(how_long).count());
    // An interrupted or failed wait says "readable": the read that follows finds out.
    return ::poll(&one, 1, milliseconds) != 0;
}

bool bytes_waiting(int socket) {
    char byte = 0;
    return ::recv(socket, &byte, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

} // namespace mirror::http
