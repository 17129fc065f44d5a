#pragma once
// Partial mirrors (spec README, "Partial mirrors"; issue 35): a mirror that follows only the
// refs its include and exclude patterns choose (fdl::ref_selection). The pass takes the
// other origin refs out before it plans anything, so every other rule holds for the refs
// it follows; and the mirror records what it follows in `.fdl-mirror/partial`, so that its
// audits know it is partial.

#include "core/fdl/ref_patterns.hpp"
#include "core/io/net.hpp"
#include "core/store/store.hpp"
#include "core/sync/inventory.hpp"
#include "verify/error.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mirror::sync {

inline constexpr std::string_view partial_key = ".fdl-mirror/partial";

/// What a mirror is told to follow: everything by default.
struct partial_settings {
    fdl::ref_selection follow;       ///< the origin refs followed
    std::optional<std::string> head; ///< the ref HEAD names when the origin's is not followed
    /// Shallow history: the newest `depth` versions of each followed ref's first-parent
    /// chain. A version once mirrored stays when it falls out of the window.
    std::optional<std::uint64_t> depth;

    bool everything() const { return follow.everything() && !depth; }
};

/// What a partial mirror follows, as it records it.
struct partial_record {
    std::vector<std::string> include;
    std::vector<std::string> exclude;
    std::optional<std::string> head; ///< the ref HEAD names when the origin's is not followed
    std::optional<std::uint64_t> depth;
    std::int64_t since = 0;          ///< unix seconds: since when these settings are followed
};

std::string render_partial(partial_record const& record);
/// "follows refs/tags/* (not refs/tags/*-rc*), HEAD names refs/tags/v1, depth 3": for
/// `verify`, `status` and `compare`.
std::string describe_partial(partial_record const& record);
/// The record for `settings`, since `since`.
partial_record record_of(partial_settings const& settings, std::int64_t since);
/// The refs a record follows (a pattern that does not parse is left out: a record is read
/// from the store, not trusted to be well formed).
fdl::ref_selection selection_of(partial_record const& record);
/// `where` names the object in messages; fdl_errc when it does not parse.
result<partial_record> parse_partial(std::string_view text, std::string const& where);

/// Takes out of `origin_refs` the refs `follow` does not follow. HEAD stays when it names a
/// followed ref (or a version: a detached HEAD); when it names another, it becomes `head`,
/// and without `head` the pass is refused (sync_errc::refused_ref): a partial mirror's
/// HEAD must name a ref it holds. Does nothing when `follow` follows everything.
result<void> select_refs(refs_snapshot& origin_refs, fdl::ref_selection const& follow,
                         std::optional<std::string> const& head);

/// `.fdl-mirror/partial` as `repo` holds it: nullopt when absent; an error when it cannot be
/// read or does not parse (named).
awaitable<result<std::optional<partial_record>>> read_partial_record(store::store& repo);

/// Whether following `depth` after `before` deepens a shallow mirror (a larger depth, or
/// none): the older versions now in the window are to be fetched, through the versions
/// the mirror already holds.
bool deepens(std::optional<partial_record> const& before, std::optional<std::uint64_t> depth);

/// Keeps `.fdl-mirror/partial` in `mirror` true to `wanted`, `before` being the record there
/// (read_partial_record): written when absent or other (its `since` now), left alone when
/// the same; removed when `wanted` follows everything.
awaitable<result<void>> keep_partial_record(store::store& mirror, partial_settings const& wanted,
                                            std::optional<partial_record> const& before, std::int64_t now);

} // namespace mirror::sync
