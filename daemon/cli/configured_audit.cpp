#include "daemon/cli/configured_audit.hpp"

#include "daemon/cli/check_config.hpp"
#include "daemon/service/pass_setup.hpp"
#include "daemon/common/terminal_text.hpp"


namespace mirror::daemon {

std::variant<configured_audit, int> configured_audit_of(verify_command const& cmd) {
    auto loaded = load_for_command(*cmd.config);
    if (!loaded)
        return exit_config;
    auto const& cfg = *loaded;
    auto const* repo = repository_for_command(cfg, *cmd.configured_repository, "verify", *cmd.config);
    if (repo == nullptr)
        return 2;
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
