#pragma once
// `fdl-mirror status --config FILE [--json] [--repository NAME]`: what the daemon's passes
// found, read from its state_dir (docs/cli.md, "status").

#include "daemon/cli/cli.hpp"

namespace mirror::daemon {

/// Prints the status; 0 when no repository calls for attention, 1 when one does (a failed
/// or timed-out last pass, held versions), 2 for an unknown repository, 78 for a
/// configuration that does not load.
int run_status(status_command const& cmd);

} // namespace mirror::daemon
