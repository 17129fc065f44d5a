#include "daemon/service/notify.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace mirror::daemon {

notifier notifier::from_environment() {
    char const* path = std::getenv("NOTIFY_SOCKET");
    if (path == nullptr || *path == '\0')
        return notifier(std::nullopt);
    return notifier(std::string(path));
}

bool notifier::send(std::string_view state, std::string* problem) const {
    if (!path_)
        return true;
    auto fail = [&](std::string why) {
        if (problem)
            *problem = "NOTIFY_SOCKET " + *path_ + ": " + why;
        return false;
    };
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path_->size() >= sizeof address.sun_path || (path_->front() != '/' && path_->front() != '@'))
        return fail("not an absolute path or an abstract name");
    std::memcpy(address.sun_path, path_->data(), path_->size());
    if (address.sun_path[0] == '@')
        address.sun_path[0] = '\0'; // an abstract socket: the name follows a NUL
    socklen_t length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path_->size());
    int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return fail(std::strerror(errno));
    auto sent = ::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL, reinterpret_cast<sockaddr const*>(&address),
                         length);
    int saved = errno;
    ::close(fd);
    if (sent < 0 || static_cast<std::size_t>(sent) != state.size())
        return fail(sent < 0 ? std::strerror(saved) : "a short write");
    return true;
}

std::string notifier::reloading_message() {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    auto usec = static_cast<unsigned long long>(now.tv_sec) * 1'000'000ULL + static_cast<unsigned long long>(now.tv_nsec) / 1000;
    return "RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec);
}

} // namespace mirror::daemon
