#include "daemon/cli/configured_audit.hpp"

#include "daemon/cli/check_config.hpp"
#include "daemon/service/pass_setup.hpp"
#include "daemon/common/terminal_text.hpp"

#include <cstdio>

namespace mirror::daemon {

std::variant<configured_audit, int> configured_audit_of(verify_command const& cmd) {
    auto loaded = config::load_config(*cmd.config);
    if (!loaded) {
        for (auto const& problem : loaded.error())
            std::fprintf(stderr, "%s\n", problem.text().c_str());
        return exit_config;
    }
    auto const& cfg = *loaded;
    config::repository_config const* repo = nullptr;
    for (auto const& r : cfg.repositories)
        if (r.name == *cmd.configured_repository)
            repo = &r;
    if (repo == nullptr) {
        print_error("verify: no repository named '" + *cmd.configured_repository + "' in " + *cmd.config);
        return 2;
    }
    auto trust = load_trust(*repo);
    if (!trust) {
        print_error(*cmd.config + ": repository '" + repo->name + "': " + trust.error().message);
        return exit_config;
    }
    configured_audit out;
    out.location = cmd.origin ? repo->origin : repo->mirror;
    throttle_registry throttles; // the origin's rate limits, as the daemon's passes keep them
    out.options = store_options_for(cfg, out.location, throttles);
    out.trust = std::move(*trust);
    if (repo->settings.allowed_signers)
        out.allowed_signers = repo->settings.allowed_signers->string();
    out.concurrency = repo->settings.concurrency; // as its passes overlap their copies
    return out;
}

} // namespace mirror::daemon
