#include "daemon/log.hpp"

#include "daemon/terminal_text.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

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

} // namespace

std::string format_log_line(config::log_format format, log_event const& event) {
    std::string line = std::string("<") + priority_of(event.level) + ">";
    if (format == config::log_format::json) {
        boost::json::object fields{{"level", config::to_string(event.level)}};
        if (!event.repo.empty())
            fields["repo"] = event.repo;
        if (!event.version.empty())
            fields["version"] = event.version;
        fields["message"] = event.message; // JSON escapes control characters itself
        return line + boost::json::serialize(fields) + "\n";
    }
    if (!event.repo.empty())
        line += "repo=" + terminal_safe(event.repo, false) + " ";
    if (!event.version.empty())
        line += "version=" + terminal_safe(event.version, false) + " ";
    return line + terminal_safe(event.message, false) + "\n";
}

void logger::write(log_event const& event) const {
    if (event.level < settings_.level)
        return;
    auto line = format_log_line(settings_.format, event);
    std::fwrite(line.data(), 1, line.size(), out_);
    std::fflush(out_);
}

} // namespace mirror::daemon
