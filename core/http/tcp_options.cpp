#include "core/http/tcp_options.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

namespace mirror::http {

namespace {

void turn_on(int socket, int option) {
    int const on = 1;
    ::setsockopt(socket, IPPROTO_TCP, option, &on, sizeof on); // a failure only costs speed
}

} // namespace

void send_at_once(int socket) { turn_on(socket, TCP_NODELAY); }

void acknowledge_at_once([[maybe_unused]] int socket) {
#ifdef TCP_QUICKACK // Linux's
    turn_on(socket, TCP_QUICKACK);
#endif
}

} // namespace mirror::http
