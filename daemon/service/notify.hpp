#pragma once
// Telling systemd how the service is doing (sd_notify's protocol, without libsystemd):
// one datagram per state change to the AF_UNIX socket $NOTIFY_SOCKET names.

#include <optional>
#include <string>
#include <string_view>

namespace mirror::daemon {

/// The service manager's notification socket, as $NOTIFY_SOCKET gives it: a path, or an
/// abstract socket name starting with '@'. Without one, every send is a no-op.
class notifier {
public:
    /// Reads $NOTIFY_SOCKET once (startup, one thread).
    static notifier from_environment();
    explicit notifier(std::optional<std::string> socket_path) : path_(std::move(socket_path)) {}

    bool enabled() const { return path_.has_value(); }
    /// Sends `state` ("READY=1", "STOPPING=1", "WATCHDOG=1", "STATUS=…", several joined by
    /// '\n'). Returns false, and sets `problem`, when the datagram could not be sent; the
    /// caller logs it once. Never blocks: the socket is non-blocking.
    bool send(std::string_view state, std::string* problem = nullptr) const;

    /// "RELOADING=1" with the MONOTONIC_USEC systemd 253+ wants beside it (older ones ignore it).
    static std::string reloading_message();

private:
    std::optional<std::string> path_;
};

} // namespace mirror::daemon
