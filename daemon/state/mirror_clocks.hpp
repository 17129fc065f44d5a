#pragma once
// The clocks that alerts read, kept with the repository in its mirror
// (`.fdl-mirror/clocks`), so that whichever daemon holds the lease continues them: since
// when the passes have failed, since when each ref has been behind, since when each version
// has been held (issue 33, section 1). The state folder keeps them across one daemon's
// restarts; this keeps them across a failover or a rebalance, where the next holder's own
// state folder knows nothing (or something old). Written by the holder under its lease,
// only when a clock starts or stops; read by a daemon as it takes the lease from another.

#include "daemon/state/state_file.hpp"
#include "verify/error.hpp"

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace mirror::daemon {

inline constexpr std::string_view clocks_key = ".fdl-mirror/clocks";

struct mirror_clocks {
    std::optional<double> failing_since;       ///< unix seconds
    std::map<std::string, double> behind_since; ///< ref -> unix seconds
    std::map<std::string, double> held_since;   ///< version -> unix seconds
    /// At most this many refs and versions each: a hostile origin cannot grow the object
    /// past a few tens of KiB (the earliest kept).
    static constexpr std::size_t max_entries = 500;
    static constexpr std::size_t max_bytes = 256 * 1024; ///< read no more than this

    friend bool operator==(mirror_clocks const&, mirror_clocks const&) = default;
};

/// The clocks running in `state`.
mirror_clocks clocks_of(repository_state const& state);

/// `holder` names the daemon in the object (for people reading it).
std::string render_clocks(mirror_clocks const& clocks, std::string const& holder, double now);
/// `where` names the object in messages.
result<mirror_clocks> parse_clocks(std::string_view text, std::string const& where);

/// Continues another holder's clocks in `state`, which this daemon's own passes have not
/// kept while it stood by: its failing clock, and the refs and versions the next pass will
/// find still behind or held keep the times the other holder saw first (record_pass keeps
/// a known "since"). A clock the other holder had stopped is stopped here too.
void adopt_clocks(repository_state& state, mirror_clocks const& clocks);

} // namespace mirror::daemon
