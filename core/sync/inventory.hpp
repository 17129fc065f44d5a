#pragma once
// Snapshots of a repository's refs and version folders, read at the start of a pass.

#include "verify/error.hpp"
#include "core/fdl/json_limits.hpp"
#include "core/fdl/refs.hpp"
#include "core/io/memory_budget.hpp"
#include "core/io/net.hpp"
#include "core/store/store.hpp"
#include "core/sync/path_table.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mirror::sync {

/// The files of one version folder: path relative to the folder -> size.
using folder_files = std::map<std::string, std::uint64_t, std::less<>>;

/// Every versions/<id>/ folder a listing shows (ids that are not version IDs skipped).
struct versions_listing {
    std::map<std::string, folder_files, std::less<>> versions;
    std::vector<std::string> refused; ///< keys whose names no path check accepts: never copied
    /// False for a probe (probe_versions), which knows only the versions it was asked
    /// about: a version it lacks may still be served.
    bool complete = true;
    /// True when the folder holds version.json: the version is published there.
    bool is_published(std::string_view id) const;
    folder_files const* files_of(std::string_view id) const;
};

/// What a pass may keep of one listing, or one refs.json's tree: a quarter of its memory
/// budget, at least 4 MiB; no limit without a budget.
std::size_t listing_share(io::memory_budget const* memory);

/// What one entry of a listing kept in memory costs, besides its key: the map's node and
/// the strings' headers.
inline constexpr std::size_t listed_entry_bytes = 96;

/// Lists versions/ of a store that can list, keeping at most `max_bytes` of it (each entry
/// its key and listed_entry_bytes): past that, the listing fails with
/// sync_errc::over_memory_limit, naming the store and the limit, while it is read, never
/// after (a listing of a million long keys once took 1.2 GB under a 48 MiB limit). The
/// keys refused for their names are named up to fdl::max_refused_listed, then counted.
awaitable<result<versions_listing>> list_versions(store::store& from, std::size_t max_bytes = SIZE_MAX);

/// For an origin that cannot list: what it serves of the versions `held` publishes, as if
/// listed. Each file the mirror holds in such a version is stat'ed at the origin, and so
/// are the files that may appear later (expired.json, version.json.sig and
/// catalogs/<format>.duckdb for each of `formats`); absent ones are left out. Costs one
/// request per file, `concurrency` at once. Fails with the first error other than
/// store_errc::not_found (the caller then has no listing, as before).
awaitable<result<versions_listing>> probe_versions(store::store& from, versions_listing const& held,
                                                  std::vector<std::string> formats, std::size_t concurrency);

/// Lists `data_dir` of a store that can list: path relative to data_dir -> size. Names
/// that fail fdl::relative_path_problem are left out. At most `max_bytes` kept, as
/// list_versions counts them; past that, sync_errc::over_memory_limit while listing.
awaitable<result<std::map<std::string, std::uint64_t>>> list_data_files(store::store& from, std::string data_dir,
                                                                         std::size_t max_bytes = SIZE_MAX);

/// The same listing held compactly, for lookups by path only (a pass's view of its
/// mirror, an audit's of its repository): built as the pages arrive, never whole as text.
/// At most `max_bytes`, each entry counted at listed_entry_bytes whatever its length.
awaitable<result<path_sizes>> list_data_sizes(store::store& from, std::string data_dir,
                                              std::size_t max_bytes = SIZE_MAX);

/// The refs of one side, as read.
struct refs_snapshot {
    fdl::ref_map refs;                       ///< valid refs under refs/heads and refs/tags
    std::optional<std::string> head_bytes;   ///< HEAD as stored, when present
    std::optional<fdl::head_value> head;     ///< HEAD parsed, when valid
    std::optional<std::string> refs_json;    ///< refs.json as stored, when present
    /// Refs whose name or content is refused: at most fdl::max_refused_listed, then one
    /// error that counts the rest (a listing of a million bad names keeps no million messages).
    std::vector<error> refused;
    std::size_t refused_more = 0; ///< refused past those named, as the last of `refused` says
    /// Refs listed whose content was no version id on two reads a moment apart (empty, cut
    /// short, malformed), with why: a write in flight at the origin as likely as a broken
    /// ref. Neither in `refs` nor in `refused`; the caller decides (sync_pass: a warning
    /// until it persists across passes).
    std::map<std::string, error> unsettled;
    std::vector<std::string> warnings;       ///< refs.json disagreeing with refs/, a bad HEAD
    /// Where refs/ was listed: each way refs.json disagrees with it (also in `warnings`),
    /// for the checks that must fail on them (an attested mirror's).
    std::vector<std::string> refs_json_disagreements;
};

/// How many refs, and how long a name, a pass takes from one side. A hostile refs.json of
/// 250,000 refs under its size limit once took minutes and hundreds of MB to mirror.
struct ref_limits {
    std::size_t max_refs = 10'000;     ///< past these, by name order, the rest are refused
    std::size_t max_name_bytes = 255;  ///< a longer name is refused (and would not fit a file name)
    /// The memory refs.json's tree may take: a pass with a budget gives a share of it.
    std::size_t max_refs_json_tree_bytes = fdl::default_max_tree_bytes;
};

/// Reads HEAD, refs/heads/*, refs/tags/* and refs.json. A store that can list is read
/// through refs/ (authoritative) and refs.json is compared with it; one that cannot is
/// read through refs.json. `side` ("origin", "mirror") prefixes messages. A ref refused
/// (its name, or past `limits`) is one entry of `refused`; the others stand. A file that
/// does not parse (a ref, HEAD, refs.json) is read again after limits::settle_pause, once
/// for all of them; a ref that still does not is `unsettled`.
awaitable<result<refs_snapshot>> read_refs(store::store& from, std::string side, ref_limits limits = {});

} // namespace mirror::sync
