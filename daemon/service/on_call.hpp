#pragma once
// The on-call's controls on a running daemon (docs/operations.md, "On-call controls"): a
// pass now, whatever the wait in hand (POST /trigger, `fdl-mirror trigger`).

#include "core/io/net.hpp"
#include "daemon/status/status_server.hpp"

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace mirror::daemon {

class repository_job;

/// A control request refused as a whole: `status` and {"error": why}.
control_answer refused_control(unsigned status, std::string why);

/// Triggers a pass of each repository named in `names` (found through `find`, which
/// answers null for one removed meanwhile) and waits, up to `patience`, until each pass
/// has started or cannot (standing by for another daemon's lease), so that the answer says
/// when it started. The answer's JSON: {"repositories": [{"repository": NAME, "result":
/// "started" | "queued" | "requested" | "standing_by" | "stopping" | "removed", and
/// "pass_started_at" (started), "running_since" (queued: the pass in hand), "detail"}]}.
awaitable<control_answer> trigger_passes(std::vector<std::string> names,
                                         std::function<repository_job*(std::string const&)> find,
                                         std::chrono::milliseconds patience);

} // namespace mirror::daemon
