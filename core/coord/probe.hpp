#pragma once
// Whether a store's server honours conditional writes, found by trying them: s3rver, for
// one, ignores If-None-Match and If-Match and stores every PUT, which would make leases
// and fenced ref writes silently unconditional.

#include "core/io/net.hpp"
#include "core/store/store.hpp"
#include "verify/error.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace mirror::coord {

/// Writes, overwrites and deletes the object `key` (one of this daemon's own: two probes
/// of one key at once could fool each other): a create-only write must lose to an object
/// there, a write naming a wrong tag must lose, one naming the right tag must win.
/// True when all three held; an error when the store could not be asked.
awaitable<result<bool>> honours_conditional_writes(store::store& mirror, std::string key);

/// A probe's answer as the mirror keeps it: which server gave it, when.
struct probe_record {
    std::string server; ///< store::server() of the store probed
    bool honoured = false;
    std::int64_t probed_at_ms = 0; ///< unix milliseconds
};

inline constexpr std::string_view probe_record_key = ".fdl-mirror/conditional-writes";

std::string render_probe_record(probe_record const& record);
/// `where` names the object in messages.
result<probe_record> parse_probe_record(std::string_view text, std::string const& where);

/// honours_conditional_writes, asked of the server at most once per `remember_for`: the
/// answer is kept in the mirror (probe_record_key) with the server that gave it and when,
/// and taken from there while it is younger and names this store's server. A record of
/// another server (the same bucket behind another endpoint), an older one, one dated in
/// the future, or one that does not parse is replaced by a new probe. For `sync` by hand,
/// which keeps nothing between runs and would otherwise probe at each (6 requests); a
/// record that cannot be written costs only the next run's probe.
awaitable<result<bool>> honours_conditional_writes_remembered(store::store& mirror, std::string probe_key,
                                                              std::chrono::system_clock::time_point now,
                                                              std::chrono::hours remember_for);

} // namespace mirror::coord
