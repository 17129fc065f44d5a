#include "daemon/cli/status_command.hpp"

#include "daemon/cli/check_config.hpp"
#include "daemon/status/status_report.hpp"
#include "daemon/common/terminal_text.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace mirror::daemon {

namespace {

/// The repositories whose state the folder holds, by the name each file records: what
/// `status` shows when the configuration cannot say which are configured.
std::vector<std::string> repositories_in(std::filesystem::path const& state_dir) {
    std::vector<std::string> names;
    std::error_code ec;
    for (auto const& entry : std::filesystem::directory_iterator(state_dir / "repositories", ec)) {
        if (!entry.is_regular_file(ec) || entry.path().extension() != ".json")
            continue;
        std::ifstream in(entry.path(), std::ios::binary);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        boost::system::error_code parse_ec;
        auto value = boost::json::parse(text, parse_ec);
        if (auto const* o = !parse_ec ? value.if_object() : nullptr)
            if (auto const* name = o->if_contains("repository"); name != nullptr && name->is_string())
                names.emplace_back(name->get_string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

} // namespace

int run_status(status_command const& cmd) {
    auto loaded = config::load_config(cmd.config);
    std::filesystem::path folder;
    std::vector<std::string> names;
    if (loaded) {
        folder = loaded->state_dir;
        for (auto const& repo : loaded->repositories)
            names.push_back(repo.name);
    } else {
        // The on-call needs status most when someone just broke the file: show what the
        // state folder holds, and say that the file is not what runs.
        for (auto const& problem : loaded.error())
            std::fprintf(stderr, "%s\n", problem.text().c_str());
        folder = config::state_dir_hint(cmd.config);
        names = repositories_in(folder);
        print_error("status: " + cmd.config + " has problems (above); the daemon runs the configuration it last "
                    "loaded. Showing the " + std::to_string(names.size()) + " repositories whose state " +
                    folder.string() + " holds");
        if (names.empty())
            return exit_config;
    }
    std::error_code ec;
    if (!std::filesystem::is_directory(folder / "repositories", ec))
        print_error(folder.string() + ": no state yet (the daemon has not run with this state_dir, or it "
                                         "cannot be read by this user)");
    std::vector<repository_status> shown;
    for (auto const& name : names) {
        if (cmd.repository && name != *cmd.repository)
            continue;
        std::string warning;
        repository_status status{name, state_dir::peek(folder, name, &warning), false, {}};
        status.state.origin_cache.clear(); // not shown
        if (!warning.empty())
            print_error("repository '" + name + "': " + warning);
        shown.push_back(std::move(status));
    }
    if (cmd.repository && shown.empty()) {
        print_error("status: no repository named '" + *cmd.repository + "' in " + cmd.config);
        return 2;
    }
    double const now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    std::string out = cmd.json ? status_json(shown, now, "state_dir") : status_text(shown, now);
    std::fwrite(out.data(), 1, out.size(), stdout);
    for (auto const& r : shown)
        if (needs_attention(r))
            return 1;
    return 0;
}

} // namespace mirror::daemon
