#include "daemon/log.hpp"

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

/// The text with control characters written as \n, \t or \xNN, so it stays on one line.
std::string one_line(std::string_view text) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(text.size());
    for (unsigned char c : text) {
        if (c == '\n')
            out += "\\n";
        else if (c == '\t')
            out += "\\t";
        else if (c < 0x20 || c == 0x7f)
            out += std::string("\\x") + hex[c >> 4] + hex[c & 15];
        else
            out += static_cast<char>(c);
    }
    return out;
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
        line += "repo=" + one_line(event.repo) + " ";
    if (!event.version.empty())
        line += "version=" + one_line(event.version) + " ";
    return line + one_line(event.message) + "\n";
}

void logger::write(log_event const& event) const {
    if (event.level < settings_.level)
        return;
    auto line = format_log_line(settings_.format, event);
    std::fwrite(line.data(), 1, line.size(), out_);
    std::fflush(out_);
}

} // namespace mirror::daemon
