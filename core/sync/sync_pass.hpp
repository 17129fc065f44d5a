#pragma once
// One sync pass: make a mirror a faithful, verified copy of an origin, in the order the
// spec README prescribes, and say what was done and what was held.

#include "core/io/net.hpp"
#include "core/io/blocking_pool.hpp"
#include "core/io/memory_budget.hpp"
#include "verify/signature_policy.hpp"
#include "core/sync/partial.hpp"
#include "core/store/store.hpp"
#include "core/sync/catalog_check.hpp"
#include "core/sync/inventory.hpp"
#include "core/sync/report.hpp"
#include "core/sync/transfer_slots.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <set>
#include <string>

namespace mirror::sync {

struct sync_options {
    bool allow_rewind = false;   ///< let branches move to versions that do not descend from the mirror's
    std::size_t concurrency = 4; ///< transfers in flight, at most
    io::blocking_pool* pool = nullptr; ///< where large chunks are hashed; inline when null
    verify::trust_settings trust;         ///< the origin's signature policy and trusted keys
    catalog_settings catalogs;            ///< where and how frozen catalogs are read
    /// The process's memory budget: a version gathered ahead holds a grant of what it keeps
    /// in memory (files.json, dataset.json, its list of data files) until it is published.
    /// Null: only the look-ahead's own bound (limits::look_ahead_bytes).
    io::memory_budget* memory = nullptr;
    ref_limits refs;                      ///< how many origin refs, and how long a name, a pass takes
    /// An origin ref whose content is no version id on two looks a moment apart (a publisher
    /// rewriting it in place, or a broken ref) is a violation at once when false: `sync` by
    /// hand, which has no next pass to wait for. When true (the daemon), it is a warning (an
    /// origin inconsistency, retried next pass) unless `unsettled_before` names it.
    bool patient_with_unsettled_refs = false;
    /// The origin refs the previous pass could not read (its report's unsettled_refs).
    std::set<std::string> unsettled_before;
    /// Re-examine the versions the mirror already published: follow late signatures, late
    /// catalogs and expiry, and compare each ref tip's version.json with the origin's
    /// bytes. An origin that can list is examined through its listing; one that cannot
    /// (HTTP) costs a request per file of each published version (probe_versions). When
    /// false, a pass reads only fdl.json, the refs and the versions it does not have yet:
    /// an unchanged HTTP origin costs 3 requests. The daemon re-examines periodically.
    bool recheck_published = true;
    /// Transfers in flight across every pass sharing it (the daemon's max_transfers), on
    /// top of `concurrency`; null: no shared cap.
    std::shared_ptr<transfer_slots> shared_transfers;
    /// Asked before each version and each data file: once it says true, the pass starts
    /// nothing new, lets the copies in flight end, moves refs to what it did publish, and
    /// ends with fatal = sync_errc::stopped (a shutdown that loses no work in flight).
    std::function<bool()> stop_requested;
    /// Called once the mirror is known to hold this repository or none (its fdl.json read
    /// and compared), before the pass writes anything to it: where the caller takes its
    /// lock on a folder mirror, so that a mirror of another repository gets nothing, not
    /// even a lock file. An error stops the pass (fatal) with nothing written.
    std::function<result<void>()> before_first_write;
    /// A dry run (`run --once --dry-run`): the pass reads fdl.json, the refs and the
    /// listings of both sides, gathers each version it lacks as a pass would (its record,
    /// signature, files.json, dataset.json and catalogs, through the same gates, one version
    /// at a time), says what it would do (sync_report::planned: the versions it would
    /// publish, oldest first, with the files and bytes each copies; `held`: those it would
    /// hold, with why; `refs`: each origin ref against the mirror's; whether it would create
    /// fdl.json), and writes nothing: no lock, no clean-up, no copy, no ref. The data files'
    /// bytes are not read (a pass checks their sha256 as it copies them).
    bool plan_only = false;
    /// A partial mirror (core/sync/partial.hpp): the origin refs followed, the ref HEAD
    /// names when the origin's is not followed, the depth of history. Everything by default.
    partial_settings partial;
};

/// Runs one pass from `origin` to `mirror` (which must be able to list and write).
/// Never throws for bad input: every refusal and failure lands in the report. The mirror
/// is consistent whenever this is interrupted: a ref only ever names a version whose
/// version.json was written after all of its files.
awaitable<sync_report> run_sync(store::store& origin, store::store& mirror, sync_options options,
                                sync_observer* observer);

} // namespace mirror::sync
