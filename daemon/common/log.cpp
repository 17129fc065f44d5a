#include "daemon/common/log.hpp"

#include "daemon/common/terminal_text.hpp"

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <cstdlib>
#include <ctime>
#include <sys/stat.h>

namespace mirror::daemon {

namespace {

/// sd-daemon(3) priorities: 3 err, 4 warning, 5 notice, 6 info, 7 debug.
char priority_of(config::log_level level) {
    switch (level) {
    case config::log_level::debug: return '7';
    case config::log_level::info: return '6';
    case config::log_level::notice: return '5';
    case config::log_level::warning: return '4';
    case config::log_level::error: return '3';
    }
    return '6';
}

/// "2026-12-02T10:00:00.123Z".
std::string utc_text(std::chrono::system_clock::time_point when) {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(when.time_since_epoch()).count();
    std::time_t seconds = static_cast<std::time_t>(ms / 1000);
    std::tm parts{};
    ::gmtime_r(&seconds, &parts);
    char text[40];
    std::size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &parts);
    std::snprintf(text + n, sizeof text - n, ".%03dZ", static_cast<int>(ms % 1000));
    return text;
}

} // namespace

bool is_journal_stream(std::FILE* file) {
    char const* stream = std::getenv("JOURNAL_STREAM");
    struct stat about {};
    if (stream == nullptr || file == nullptr || ::fstat(::fileno(file), &about) != 0)
        return false;
    unsigned long long device = 0, inode = 0;
    if (std::sscanf(stream, "%llu:%llu", &device, &inode) != 2)
        return false;
    return device == static_cast<unsigned long long>(about.st_dev) &&
           inode == static_cast<unsigned long long>(about.st_ino);
}

std::string format_log_line(config::log_format format, log_sink sink, log_event const& event,
                            std::chrono::system_clock::time_point when) {
    std::string line = sink == log_sink::journald ? std::string("<") + priority_of(event.level) + ">" : std::string();
    if (format == config::log_format::json) {
        boost::json::object o;
        o["time"] = utc_text(when);
        o["level"] = config::to_string(event.level);
        if (!event.repo.empty())
            o["repo"] = event.repo;
        if (!event.version.empty())
            o["version"] = event.version;
        o["message"] = event.message; // JSON escapes control characters itself
        for (auto const& field : event.fields)
            std::visit([&](auto const& value) { o[field.key] = value; }, field.value);
        return line + boost::json::serialize(o) + "\n";
    }
    if (sink == log_sink::stream)
        line += utc_text(when) + " " + std::string(config::to_string(event.level)) + " ";
    if (!event.repo.empty())
        line += "repo=" + terminal_safe(event.repo, false) + " ";
    if (!event.version.empty())
        line += "version=" + terminal_safe(event.version, false) + " ";
    return line + terminal_safe(event.message, false) + "\n";
}

logger::logger(config::log_settings settings, std::FILE* out, std::optional<log_sink> sink)
    : settings_(settings), out_(out),
      sink_(sink.value_or(is_journal_stream(out) ? log_sink::journald : log_sink::stream)) {}

void logger::write(log_event const& event) const {
    if (!enabled(event.level))
        return;
    auto line = format_log_line(settings_.format, sink_, event, std::chrono::system_clock::now());
    std::fwrite(line.data(), 1, line.size(), out_);
    std::fflush(out_);
}

} // namespace mirror::daemon
