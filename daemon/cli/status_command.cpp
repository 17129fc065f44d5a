#include "daemon/cli/status_command.hpp"

#include "daemon/cli/check_config.hpp"
#include "daemon/status/status_report.hpp"
#include "daemon/common/terminal_text.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>

namespace mirror::daemon {

int run_status(status_command const& cmd) {
    auto loaded = config::load_config(cmd.config);
    if (!loaded) {
        for (auto const& problem : loaded.error())
            std::fprintf(stderr, "%s\n", problem.text().c_str());
        return exit_config;
    }
    auto const& cfg = *loaded;
    std::error_code ec;
    if (!std::filesystem::is_directory(cfg.state_dir / "repositories", ec))
        print_error(cfg.state_dir.string() + ": no state yet (the daemon has not run with this state_dir, or it "
                                             "cannot be read by this user)");
    std::vector<repository_status> shown;
    for (auto const& repo : cfg.repositories) {
        if (cmd.repository && repo.name != *cmd.repository)
            continue;
        std::string warning;
        repository_status status{repo.name, state_dir::peek(cfg.state_dir, repo.name, &warning), false, {}};
        status.state.origin_cache.clear(); // not shown
        if (!warning.empty())
            print_error("repository '" + repo.name + "': " + warning);
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
