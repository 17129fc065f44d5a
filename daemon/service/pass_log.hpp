#pragma once
// What the daemon's log says about one finished pass: a line per event (a version
// published or held, a ref moved, a violation, a warning), then one summary line whose
// priority says how the pass went.

#include "core/sync/report.hpp"
#include "daemon/common/log.hpp"
#include "daemon/metrics/metrics.hpp"

#include <string>

namespace mirror::daemon {

/// "pass ok in 1.2 s: 2 versions published, 14 files (3.1 MiB) copied; 3 refs in sync",
/// "pass held in …", "pass failed in …: why", "pass timeout in …: why".
std::string pass_summary(sync::sync_report const& report, finished_pass const& pass);

void log_pass(logger const& log, std::string const& repo, sync::sync_report const& report, finished_pass const& pass);

} // namespace mirror::daemon
