#pragma once
// The mirror's data-file ledger: the size and SHA-256 of each data file when it was
// copied, so that an audit can prove the mirror still holds the same bytes (spec README,
// "Immutability, as a mirror enforces it"). Kept inside the mirror under .fdl-mirror/,
// a root folder that readers ignore, one segment per published version.

#include "verify/error.hpp"
#include "core/io/net.hpp"
#include "core/store/store.hpp"
#include "core/sync/path_table.hpp"
#include "verify/sha256.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace mirror::sync {

struct ledger_entry {
    std::uint64_t bytes = 0;
    verify::sha256_digest sha256{};
};

/// Data file path (relative to data_dir) -> what was recorded when it was copied.
using data_ledger = std::map<std::string, ledger_entry, std::less<>>;

/// The folder of ledger segments in a mirror.
inline constexpr std::string_view ledger_prefix = ".fdl-mirror/ledger/";

/// The key of the segment written with version `id`.
std::string ledger_key(std::string_view id);

/// Renders a segment: one JSON object, {"data_files": {path: {"bytes", "sha256"}}}.
std::string render_ledger_segment(data_ledger const& entries);

/// Parses a segment; `name` names it in messages. Paths are checked like data paths, and a
/// path twice is refused (two parsers would read it two ways); its tree may take at most
/// `max_tree_bytes`, else fdl_errc::too_large.
result<data_ledger> parse_ledger_segment(std::string_view text, std::string_view name,
                                         std::size_t max_tree_bytes = std::size_t{256} << 20);

class transfer_slots;

/// How a walk of the ledger reads its segments: up to `concurrency` at once (at most 8),
/// each read holding one of `shared` when given (the daemon's max_transfers).
struct ledger_reads {
    std::size_t concurrency = 1;
    transfer_slots* shared = nullptr;
    /// What the walk may hold at once in segments' texts and trees (a share of the memory
    /// budget): a segment larger than a third of it is refused before it is read, and
    /// fewer are read at once when they are large. 0: no bound but a segment's 256 MiB.
    std::size_t memory = 0;
};

/// Reads every segment of a store that can list. An absent ledger is an empty one; a
/// segment that cannot be parsed fails the load (the caller reports it).
awaitable<result<data_ledger>> load_ledger(store::store& from, ledger_reads reads = {});

/// Data file path -> what was recorded, held compactly (path_table): about 100 bytes an
/// entry whatever the path's length.
using ledger_index = path_table<ledger_entry>;

/// Like load_ledger, for lookups by path only: read a segment at a time, so the whole
/// ledger is never held as text (what a pass and an audit need of it).
awaitable<result<ledger_index>> load_ledger_index(store::store& from, ledger_reads reads = {});

/// One segment's worth of entries for for_each_new_ledger_entries: paths not handed on
/// before, each with its first record, in path order. The visitor may take them.
using ledger_visitor = std::function<awaitable<result<void>>(data_ledger& entries)>;

/// Hands each path the ledger records to `visit` once, with its first record, a segment at
/// a time in the segments' name order (what the scheduled audits walk). What
/// it holds besides one segment is a path_key per path handed on (about 70 bytes each),
/// never the ledger's text. A segment that cannot be read or parsed, or an error from
/// `visit`, stops the walk and is returned.
awaitable<result<void>> for_each_new_ledger_entries(store::store& from, ledger_visitor const& visit,
                                                    ledger_reads reads = {});

/// The data_dir that `mirror`'s fdl.json names, the keys of its data files being
/// data_dir + path (for the scheduled audits). Fails naming the mirror and fdl.json.
awaitable<result<std::string>> load_mirror_data_dir(store::store& mirror);

} // namespace mirror::sync
