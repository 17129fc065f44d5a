#include "daemon/cli/trigger_command.hpp"

#include "config/daemon_config.hpp"
#include "daemon/cli/check_config.hpp"
#include "daemon/cli/daemon_client.hpp"
#include "core/io/errors.hpp"
#include "daemon/common/terminal_text.hpp"

#include <boost/json.hpp>
#include <boost/url/encode.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>

#include <cstdio>

namespace mirror::daemon {

namespace json = boost::json;

namespace {

std::string text_of(json::value const* v) {
    return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

/// One line for a person, and whether that outcome is a success.
std::pair<std::string, bool> line_of(json::object const& entry) {
    std::string const name = text_of(entry.if_contains("repository"));
    std::string const result = text_of(entry.if_contains("result"));
    std::string const detail = text_of(entry.if_contains("detail"));
    if (result == "started")
        return {name + ": pass started at " + text_of(entry.if_contains("pass_started_at")), true};
    if (result == "queued") {
        std::string since = text_of(entry.if_contains("running_since"));
        return {name + ": queued: " + (since.empty() ? detail : "a pass is running since " + since +
                                                                   "; the next starts right after it"),
                true};
    }
    if (result == "requested")
        return {name + ": requested, " + detail, true};
    return {name + ": " + result + ": " + detail, false};
}

} // namespace

int run_trigger(trigger_command const& cmd) {
    auto loaded = load_for_command(cmd.config);
    if (!loaded)
        return exit_config;
    std::string target = "/trigger";
    if (cmd.repository)
        target += "?repository=" + boost::urls::encode(*cmd.repository, boost::urls::unreserved_chars);
    auto answer = post_to_daemon(*loaded, target);
    if (!answer && answer.error().code == make_error_code(io::store_errc::rejected)) {
        print_error("trigger: " + answer.error().message); // what to set, before any connection
        return exit_config;
    }
    if (!answer) {
        print_error("trigger: " + answer.error().message + ": is `fdl-mirror run --config " + cmd.config +
                    "` running on this host?");
        return exit_unavailable;
    }
    boost::system::error_code ec;
    auto body = json::parse(answer->body, ec);
    auto const* top = !ec && body.is_object() ? &body.get_object() : nullptr;
    if (answer->status != 200 || top == nullptr) {
        std::string why = top != nullptr ? text_of(top->if_contains("error")) : terminal_safe(answer->body.substr(0, 200), false);
        print_error("trigger: the daemon answered " + std::to_string(answer->status) + ": " + why);
        return answer->status == 404 ? 2 : exit_unavailable;
    }
    if (cmd.json) {
        std::fwrite(answer->body.data(), 1, answer->body.size(), stdout);
    }
    bool all_well = true;
    auto const* repositories = top->if_contains("repositories");
    if (repositories != nullptr && repositories->is_array())
        for (auto const& entry : repositories->get_array()) {
            if (!entry.is_object())
                continue;
            auto [line, well] = line_of(entry.get_object());
            all_well = all_well && well;
            if (!cmd.json)
                std::printf("%s\n", terminal_safe(line, false).c_str());
        }
    return all_well ? 0 : 1;
}

} // namespace mirror::daemon
