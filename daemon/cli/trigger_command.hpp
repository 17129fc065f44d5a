#pragma once
// `fdl-mirror trigger --config FILE [--repository NAME] [--json]`: asks the running daemon
// for a pass now, over loopback (POST /trigger; docs/cli.md, "trigger").

#include "daemon/cli/cli.hpp"

namespace mirror::daemon {

/// 0 every pass started or follows the one in hand; 1 one cannot start on this daemon
/// (standing by for another's lease, stopping, removed); 2 an unknown repository; 69 no
/// daemon answers on the configuration's listen address; 78 the configuration does not load.
int run_trigger(trigger_command const& cmd);

} // namespace mirror::daemon
