#pragma once
// The daemon's log: one line per event on stderr, with the sd-daemon priority prefix
// ("<6>") that journald reads, plain or JSON. Every line names its repository and, where
// there is one, its version. Secrets never reach here: callers pass messages that name
// objects, and core's messages never hold credentials.

#include "config/daemon_config.hpp"

#include <cstdio>
#include <string>
#include <string_view>

namespace mirror::daemon {

/// One event.
struct log_event {
    config::log_level level = config::log_level::info;
    std::string_view repo;    ///< "" for the daemon itself
    std::string_view version; ///< "" when the event is not about one version
    std::string_view message;
};

/// The line for `event`, ending in '\n': "<6>repo=population version=019a… message" in
/// plain format (repo and version left out when empty), or
/// "<6>{"level":"info","repo":"population","version":"019a…","message":"…"}" in JSON.
/// Control characters in the message are escaped, so one event is always one line.
std::string format_log_line(config::log_format format, log_event const& event);

/// Writes events at or above a level to a stream (stderr by default). Single-threaded: the
/// I/O thread's.
class logger {
public:
    logger(config::log_settings settings, std::FILE* out = stderr) : settings_(settings), out_(out) {}
    void set(config::log_settings settings) { settings_ = settings; }
    void write(log_event const& event) const;
    void info(std::string_view repo, std::string_view message) const { write({config::log_level::info, repo, {}, message}); }
    void warning(std::string_view repo, std::string_view message) const {
        write({config::log_level::warning, repo, {}, message});
    }
    void error(std::string_view repo, std::string_view message) const { write({config::log_level::error, repo, {}, message}); }

private:
    config::log_settings settings_;
    std::FILE* out_;
};

} // namespace mirror::daemon
