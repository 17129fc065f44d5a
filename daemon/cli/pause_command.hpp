#pragma once
// `fdl-mirror pause` and `fdl-mirror resume` (docs/cli.md): the operator's pause of one
// repository, written into (or deleted from) its mirror as `.fdl-mirror/paused`, which
// every daemon mirroring it obeys before each pass.

#include "daemon/cli/cli.hpp"

namespace mirror::daemon {

/// 0 done; 2 usage error or an unknown repository; 3 the mirror cannot be written (the
/// error names it); 78 the configuration does not load.
int run_pause(pause_command const& cmd);

} // namespace mirror::daemon
