#pragma once
// An operator's pause of a repository (`fdl-mirror pause`): a small object in its mirror,
// `.fdl-mirror/paused`, that every daemon mirroring it reads before each pass and obeys
// (no pass while it exists). Kept with the mirror rather than on one host, so that a
// fleet obeys it whichever daemon holds the lease, it survives restarts and failovers,
// and it can be set while no daemon runs. `fdl-mirror resume` deletes it.

#include "core/io/net.hpp"
#include "core/store/store.hpp"
#include "verify/error.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace mirror::coord {

inline constexpr std::string_view pause_key = ".fdl-mirror/paused";

/// The pause object's contents (JSON).
struct pause_record {
    double since = 0;   ///< unix seconds
    std::string by;     ///< who paused it ("user@host")
    std::string reason; ///< why, as they said; may be empty
    bool operator==(pause_record const&) const = default;
};

std::string render_pause(pause_record const& record);

/// The record in `text`. A pause object that does not parse still pauses (its presence is
/// what counts): its reason then says the object is unreadable, and why.
pause_record parse_pause(std::string_view text);

/// The pause of the repository whose mirror is `mirror`: nullopt when it is not paused.
awaitable<result<std::optional<pause_record>>> read_pause(store::store& mirror);

} // namespace mirror::coord
