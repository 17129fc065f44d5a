#pragma once
// The daemon's log: one line per event on stderr, plain or JSON. Under journald (stderr is
// the journal's stream, as $JOURNAL_STREAM says) each line starts with the sd-daemon
// priority prefix ("<6>") that journald turns into the entry's priority, and carries no
// time (the journal has it). Anywhere else a plain line starts with the time (UTC, ms) and
// the level, and a JSON line is one JSON object and nothing else, with "time" and "level"
// members. JSON lines carry the event's fields (repository, version, ref, counts,
// durations, error kind) as members; plain lines say the same in their message. Secrets
// never reach here: callers pass messages that name objects, and core's messages never
// hold credentials.

#include "config/daemon_config.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

namespace mirror::daemon {

/// A structured field of an event: a JSON member of its line in the JSON format.
struct log_field {
    std::string_view key;
    std::variant<std::string_view, double, std::uint64_t> value;
};

/// One event.
struct log_event {
    config::log_level level = config::log_level::info;
    std::string_view repo;    ///< "" for the daemon itself
    std::string_view version; ///< "" when the event is not about one version
    std::string_view message;
    std::span<log_field const> fields = {}; ///< more, for the JSON format; keys other than the members above
};

/// Where the lines go: the journal's stream, or anything else (a terminal, a file, a pipe).
enum class log_sink { journald, stream };

/// Whether `file` is the stream journald gave this process ($JOURNAL_STREAM is its
/// "device:inode").
bool is_journal_stream(std::FILE* file);

/// The line for `event` at `when`, ending in '\\n'. Plain: "<6>repo=population version=019a…
/// message" for journald, "2026-12-02T10:00:00.123Z info repo=population … message"
/// otherwise (repo and version left out when empty). JSON: {"time","level","repo",
/// "version","message", fields…}, after "<6>" for journald. Control characters are
/// escaped, so one event is always one line.
std::string format_log_line(config::log_format format, log_sink sink, log_event const& event,
                            std::chrono::system_clock::time_point when);

/// Writes events at or above a level to a stream (stderr by default). Single-threaded: the
/// I/O thread's.
class logger {
public:
    /// `sink` unset: journald when `out` is the journal's stream, else stream.
    explicit logger(config::log_settings settings, std::FILE* out = stderr, std::optional<log_sink> sink = std::nullopt);
    void set(config::log_settings settings) { settings_ = settings; }
    bool enabled(config::log_level level) const { return level >= settings_.level; }
    void write(log_event const& event) const;
    void debug(std::string_view repo, std::string_view message) const { write({config::log_level::debug, repo, {}, message}); }
    void info(std::string_view repo, std::string_view message) const { write({config::log_level::info, repo, {}, message}); }
    void warning(std::string_view repo, std::string_view message) const {
        write({config::log_level::warning, repo, {}, message});
    }
    void error(std::string_view repo, std::string_view message) const { write({config::log_level::error, repo, {}, message}); }

private:
    config::log_settings settings_;
    std::FILE* out_;
    log_sink sink_;
};

} // namespace mirror::daemon
