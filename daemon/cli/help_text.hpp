#pragma once
// The help texts: `fdl-mirror --help` (every command, one line each, and the options) and
// `fdl-mirror COMMAND --help` (one command in full). docs/cli.md says the same at length;
// scripts/make-man turns docs/cli.md and docs/configuration.md into the man pages.

#include <string>
#include <string_view>
#include <vector>

namespace mirror::daemon {

/// The commands, in the order --help lists them.
std::vector<std::string_view> command_names();

/// The --help text.
std::string usage_text();

/// `fdl-mirror COMMAND --help`: its synopsis, what it does, its options and exit status.
/// `command` must be one of command_names().
std::string command_help_text(std::string_view command);

} // namespace mirror::daemon
