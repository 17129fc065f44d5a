#pragma once
// What `fdl-mirror status` and the daemon's /status show: per repository, the last result
// and its time, the last error, the refs with their lag, the held versions with their
// reasons, and the next pass. Built from the state the daemon keeps (state_file.hpp), so
// that it reads the same from the running daemon and from state_dir after a restart.

#include "daemon/state/state_file.hpp"

#include <optional>
#include <string>
#include <vector>

namespace mirror::daemon {

/// One repository's status, with what only a running daemon knows when it is one.
struct repository_status {
    std::string name;
    repository_state state;
    bool in_pass = false;    ///< a pass runs now (daemon only)
    std::string standing_by; ///< the daemon holding its lease, when this one stands by (daemon only)
    std::string lease_anomaly; ///< what is wrong with its lease as last read; empty when nothing (daemon only)
    /// What this daemon is to the repository (daemon only): "holder" (it holds the lease),
    /// "standing_by" (another daemon does, standing_by says which), "taking" (it holds no
    /// lease yet), "alone" (no lease: coordination off, or a folder mirror and its lock),
    /// "paused"; "" from the state folder.
    std::string role;
};

/// The daemon's last reload (SIGHUP), for /status.
struct reload_summary {
    double at = 0;                      ///< unix seconds
    bool applied = true;                ///< false: refused, the previous configuration runs
    std::vector<std::string> problems;  ///< why it was refused, one a line
};

/// "2026-12-02T10:03:04Z": a time in UTC, to the second.
std::string utc_time(double unix_seconds);

/// The status as JSON text: {"time": now, "repositories": [...]}, `source` saying where it
/// came from ("daemon" or "state_dir").
std::string status_json(std::vector<repository_status> const& repositories, double now, std::string const& source,
                        std::optional<reload_summary> const& last_reload = std::nullopt);

/// The same for a terminal: one block per repository, full version ids, times in UTC with
/// their age. Text from the origin (errors, ref names) is made terminal-safe.
std::string status_text(std::vector<repository_status> const& repositories, double now);

/// Whether a repository's status calls for attention: its last pass failed or timed out,
/// it holds versions, the scrub found data files of the mirror damaged (until a round
/// finds none), or its lease claims longer than it may. `status` exits 1 when one does.
bool needs_attention(repository_status const& repository);

} // namespace mirror::daemon
