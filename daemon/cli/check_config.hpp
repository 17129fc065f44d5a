#pragma once
// `fdl-mirror check-config --config FILE`: what the daemon would refuse at startup, found
// without starting it (systemd's ExecReload= runs it before SIGHUP).

#include "config/daemon_config.hpp"

#include <optional>
#include <string>
#include <vector>

namespace mirror::daemon {

/// EX_CONFIG (sysexits.h): the configuration is wrong.
inline constexpr int exit_config = 78;

/// Problems with the files a loaded configuration names, which the YAML alone cannot show:
/// each allowed_signers file must be a readable, valid OpenSSH allowed_signers file, each
/// ca_bundle PEM certificates a TLS client loads, each credentials_file a file the S3
/// store reads keys from (parsed as the store parses it, with the entry's profile). Each
/// problem names the repository or store entry, the key and the file. Reads the files;
/// writes nothing. Warnings (added to `warnings` when given) are not problems: lines of an
/// allowed_signers file that do not parse (skipped, as OpenSSH skips them), and a
/// credentials_file under /run/credentials/SERVICE/ (or $CREDENTIALS_DIRECTORY) while
/// that folder is absent, when `before_service_start` (check-config: systemd makes it
/// when the service starts; the daemon itself refuses a missing one).
std::vector<std::string> check_named_files(config::daemon_config const& cfg,
                                           std::vector<std::string>* warnings = nullptr,
                                           bool before_service_start = false);

/// The configuration at `path` for a command that needs it whole (trigger, pause, verify
/// --config): nullopt, with every problem printed to stderr as `file:line:col: message`,
/// when it does not load (the command then exits exit_config).
std::optional<config::daemon_config> load_for_command(std::string const& path);

/// How the endpoints are served under `cfg`: "plain HTTP", or "TLS, client certificates
/// (RequireAndVerifyClientCert), basic authentication (2 users)".
/// The events' section against its secrets file and the listener's exposure: a repository
/// asking for webhooks without a secret, for S3 notifications without a token, a listener
/// beyond loopback without TLS; each a line. Into `warnings` (when given): one webhook
/// secret shared by several repositories (a sender of one could start the others' passes
/// if the path were not signed; and one leak exposes them all).
std::vector<std::string> check_events(config::daemon_config const& cfg, std::vector<std::string>* warnings = nullptr);

std::string endpoint_security(config::daemon_config const& cfg);

/// The repository named `name` in `cfg`; null, with `COMMAND: no repository named 'NAME'
/// in FILE` printed, when there is none (the command then exits 2).
config::repository_config const* repository_for_command(config::daemon_config const& cfg, std::string const& name,
                                                        std::string const& command, std::string const& file);

/// Loads `path`, prints every problem to stderr as `file:line:col: message` (then the
/// problems of check_named_files) and returns exit_config; or prints each warning to
/// stderr, a one-line summary to stdout, and returns 0. `web_config_file`
/// (--web.config.file) stands for the file's web_config_file.
int run_check_config(std::string const& path, std::optional<std::string> const& web_config_file = std::nullopt);

} // namespace mirror::daemon
