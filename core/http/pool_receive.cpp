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
        auto wait = std::min<std::chrono::steady_clock::duration>(quiet, until - now);
        pollfd one{socket, POLLIN, 0};
        int ready = ::poll(&one, 1, static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(wait).count()));
        if (ready == 0)
            break; // quiet: the I/O thread waits for the rest
        if (ready < 0 && errno != EINTR) {
            out.error = errno;
            break;
        }
    }
    return out;
}

bool bytes_waiting(int socket) {
    char byte = 0;
    return ::recv(socket, &byte, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

} // namespace mirror::http
