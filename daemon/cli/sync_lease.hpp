#pragma once
// `fdl-mirror sync` into a mirror whose store honours conditional writes (S3): the pass
// holds the repository's lease, as a daemon's pass does (docs/operations.md, "Running
// several instances"), so that a sync by hand and the daemons never write one mirror at
// once. A folder mirror has its lock instead (mirror_lock).

#include "core/io/net.hpp"
#include "core/store/store.hpp"
#include "core/sync/sync_pass.hpp"

namespace mirror::daemon {

/// Runs one pass from `origin` into `target` (the mirror, or a wrapper of it) while holding
/// the lease of `mirror` for it: taken first (a pass whose lease another holder has ends
/// at once, fatal, nothing written), renewed while the pass runs, released after. A store
/// that does not honour conditional writes runs the pass as before, with a warning in the
/// report.
awaitable<sync::sync_report> sync_holding_lease(store::store& origin, store::store& mirror, store::store& target,
                                                sync::sync_options options, sync::sync_observer* observer);

} // namespace mirror::daemon
