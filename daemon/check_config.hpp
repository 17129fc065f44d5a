#pragma once
// `fdl-mirror check-config --config FILE`: what the daemon would refuse at startup, found
// without starting it (systemd's ExecReload= runs it before SIGHUP).

#include "config/daemon_config.hpp"

#include <string>
#include <vector>

namespace mirror::daemon {

/// EX_CONFIG (sysexits.h): the configuration is wrong.
inline constexpr int exit_config = 78;

/// Problems with the files a loaded configuration names, which the YAML alone cannot show:
/// each allowed_signers file must be a readable, valid OpenSSH allowed_signers file, each
/// credentials_file and ca_bundle a readable file. Each problem names the repository or
/// store entry, the key and the file. Reads the files; writes nothing. Lines of an
/// allowed_signers file that do not parse are not problems (they are skipped, as OpenSSH
/// skips them) but warnings, added to `warnings` when given.
std::vector<std::string> check_named_files(config::daemon_config const& cfg,
                                           std::vector<std::string>* warnings = nullptr);

/// Loads `path`, prints every problem to stderr as `file:line:col: message` (then the
/// problems of check_named_files) and returns exit_config; or prints each warning to
/// stderr, a one-line summary to stdout, and returns 0.
int run_check_config(std::string const& path);

} // namespace mirror::daemon
