#pragma once
// `fdl-mirror run --config FILE`: the long-lived service. It loads the configuration,
// binds /metrics, runs one job per repository, tells systemd how it is doing, reloads on
// SIGHUP and stops cleanly on SIGTERM or SIGINT.

#include <optional>
#include <string>

namespace mirror::daemon {

/// Exit statuses of `run` besides 0 and exit_config (78): the state folder cannot be used
/// (EX_CANTCREAT), the listener cannot be bound (EX_UNAVAILABLE).
inline constexpr int exit_cannot_create = 73;
inline constexpr int exit_unavailable = 69;

/// Runs the daemon until SIGTERM or SIGINT; returns the process's exit status.
/// `web_config_file` (--web.config.file) stands for the configuration's web_config_file.
int run_service(std::string const& config_path, std::optional<std::string> const& web_config_file = std::nullopt);

} // namespace mirror::daemon
