#pragma once
// What the daemon's log says about one finished pass: a line per event (a version
// published or held, a ref moved, a violation, a warning), then one summary line whose
// priority says how the pass went.

#include "core/sync/report.hpp"
#include "daemon/common/log.hpp"
#include "daemon/metrics/metrics.hpp"

#include <set>
#include <string>

namespace mirror::daemon {

/// "pass ok in 1.2 s: 2 versions published, 14 files (3.1 MiB) copied; 3 refs in sync",
/// "pass held in …", "pass failed in …: why", "pass timeout in …: why".
std::string pass_summary(sync::sync_report const& report, finished_pass const& pass);

/// Logs the pass. A violation whose message is in `known_violations` (those the previous
/// pass logged) is logged at debug, as still there: an error line once per finding, not
/// every pass. Each violation line carries the ref and the version it is about
/// (sync::subject_of) besides its kind.
void log_pass(logger const& log, std::string const& repo, sync::sync_report const& report, finished_pass const& pass,
              std::set<std::string> const& known_violations = {});

} // namespace mirror::daemon
