#pragma once
// Private to core/sync: the state of one pass, shared by its stages
// (sync_pass.cpp, gather.cpp, publish.cpp, follow_published.cpp, update_refs.cpp).

#include "core/fdl/repo_settings.hpp"
#include "core/fdl/version_record.hpp"
#include "core/store/store.hpp"
#include "core/sync/inventory.hpp"
#include "core/sync/ledger.hpp"
#include "core/sync/plan.hpp"
#include "core/sync/report.hpp"
#include "core/sync/sync_pass.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace mirror::sync::detail {

struct loaded_version {
    std::string bytes; ///< version.json exactly as the origin serves it
    fdl::version_record record;
};

struct pass {
    store::store& origin;
    store::store& mirror;
    sync_options options;
    sync_observer* observer;
    sync_report& report;

    fdl::repo_settings settings;                   ///< the origin's fdl.json
    std::optional<versions_listing> origin_versions; ///< when the origin can list
    versions_listing mirror_versions;              ///< as the pass began
    std::map<std::string, result<loaded_version>, std::less<>> origin_records;
    std::map<std::string, std::optional<std::string>, std::less<>> mirror_parents; ///< read while walking back
    std::optional<path_sizes> mirror_data; ///< listed on first need
    std::optional<std::map<std::string, std::uint64_t>> origin_data;  ///< listed on first need
    std::optional<ledger_index> ledger; ///< the mirror's ledger, loaded on first need
    std::set<std::string, std::less<>> published_now;
    std::map<std::string, error, std::less<>> held;
    std::optional<error> mirror_failure; ///< a mirror write failed: the pass stops
    std::int64_t now = 0;                ///< when the pass began: the time keys' windows are checked at
    std::map<std::string, verify::signer_info, std::less<>> signer_of; ///< trusted signers found by the gate
    scratch_space scratch{options.catalogs, options.pool}; ///< private catalog copies
    std::set<std::string, std::less<>> checked_copies; ///< keys in `scratch`, checked: publish from there
    /// Data files (key -> bytes) that versions planned but not published still need.
    std::map<std::string, std::uint64_t, std::less<>> pending_data;

    bool is_published(std::string_view id) const {
        return mirror_versions.is_published(id) || published_now.contains(id);
    }
    void hold(std::string const& id, error why);
    bool stop_requested() const { return options.stop_requested && options.stop_requested(); }
    /// Records a failure of the mirror (stop) or an origin I/O failure (go on, exit 3).
    bool note_failure(error const& e, bool on_mirror);
};

/// Reads and checks versions/<id>/version.json from the origin, once per pass.
awaitable<result<loaded_version> const*> load_origin_record(pass& p, std::string id);

/// Reads an origin's version.json.sig for the signature gate: nullopt when there is none
/// (the listing says so, or the origin answers not found).
awaitable<result<std::optional<std::string>>> read_origin_signature(pass& p, std::string id);

/// Files of a version that were read whole, checked, and are written from memory.
using memory_files = std::map<std::string, std::string, std::less<>>;

/// What a version needs from the origin, read and checked (its catalog through the
/// gate), before anything of it is written.
struct checked_version {
    version_inputs inputs;
    memory_files memory;
    /// What is wrong with the version without holding it (files.json disagreeing with the
    /// catalog, which is the authority): reported when it is published.
    std::vector<error> problems;
};

/// A version gathered ahead of its turn to be published.
struct gathered_version {
    std::string id;
    /// nullopt when nothing was read: its record failed, or its first parent was held.
    std::optional<result<checked_version>> checked;
    bool scratch_failed = false;  ///< the failure was the local scratch folder's
    std::uint64_t held_bytes = 0; ///< what it holds until published (memory, scratch), roughly
    std::uint64_t memory_bytes = 0; ///< of held_bytes, what is in memory (not catalog copies on disk)
    io::memory_budget::grant memory; ///< of the process's budget, for memory_bytes
};

/// What a version held before its data files were known (by the signature gate) would
/// need, added to p.pending_data: the data files its files.json (pinned by version.json)
/// lists that the mirror lacks. Its catalog is not read. Nothing without a files.json.
awaitable<void> count_pending_unchecked(pass& p, std::string const& id, fdl::version_record const& record);

/// Reads and checks from the origin what version `id` (whose record is `loaded`) needs:
/// its signature, files.json, dataset.json and catalogs (the gate). Writes nothing to the
/// mirror and reports nothing; of the pass it touches only what is this version's own (its
/// scratch copies, its signer) and caches of origin reads, so that it can run while earlier
/// versions are published. What it parses is granted from the pass's memory budget first
/// (over_memory_limit past what one version may have). A failure of the scratch folder
/// itself is noted on p.scratch (scratch_space::failed).
awaitable<result<checked_version>> gather_checked(pass& p, std::string const& id, loaded_version const& loaded);

/// Reads and checks from the origin what version `id` needs: its record, signature,
/// files.json, dataset.json and catalogs (the gate). Writes nothing to the mirror and
/// reports nothing (its publication does), so it may run while earlier versions are
/// being published.
awaitable<gathered_version> gather_version(pass& p, std::string id);

/// Publishes a gathered version whose first parent is published (gathering it now if it
/// was not), or holds it with the reason. Versions go through here oldest first.
awaitable<void> publish_version(pass& p, gathered_version& gathered);

/// A dry run's publish_version: the same gathering, checks and plan against the mirror,
/// nothing written. A version that would publish lands in report.planned with what it
/// copies, and counts as published for its children and for the data files that later
/// versions share; one that would be held is held, with the reason.
awaitable<void> assess_version(pass& p, gathered_version& gathered);

/// Follows allowed late changes of versions the mirror published before this pass
/// (expiry, withdrawal, a late signature or catalog) and reports the rest as violations.
awaitable<void> follow_published(pass& p);

/// Moves the mirror's refs to published versions, then writes refs.json, then HEAD.
awaitable<void> update_refs(pass& p, refs_snapshot const& origin_refs, refs_snapshot const& mirror_refs);

} // namespace mirror::sync::detail
