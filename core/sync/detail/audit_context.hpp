#pragma once
// Private to core/sync: the state of one audit, shared by its parts (audit.cpp walks the
// refs and versions; audit_contents.cpp checks a live version's pinned and data files).

#include "core/fdl/repo_settings.hpp"
#include "core/fdl/version_record.hpp"
#include "core/store/store.hpp"
#include "core/sync/audit.hpp"
#include "core/sync/catalog_check.hpp"
#include "core/sync/ledger.hpp"
#include "core/sync/path_table.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace mirror::sync::detail {

struct audit_context {
    store::store& repo;
    sync_observer* observer;
    io::blocking_pool* pool;
    audit_report& report;
    fdl::repo_settings settings;
    std::optional<path_sizes> data; ///< data_dir listing, when it can list
    ledger_index ledger; ///< a mirror's record of its data files' digests; empty for an origin
    /// The ledger's entries whose data file this audit hashed, by address (a path_table's
    /// entries stay put): equal to the ledger, or why not. Keyed by address rather than by
    /// path so that a repository of 100,000 files does not hold every path once more.
    std::unordered_set<ledger_entry const*> proven;
    std::unordered_map<ledger_entry const*, error> disproven;
    audit_options const& options;
    std::int64_t now = 0;
    scratch_space scratch{options.catalogs, pool}; ///< private catalog copies
};

/// Reads a store error as a problem of the audited object, or an I/O failure.
error noted(audit_context& c, error e);

/// The catalog, dataset.json, files.json and data files of a version that is not expired
/// (in `folder`, "versions/<id>/"): problems and manifest entries go into `v`.
awaitable<void> audit_live_contents(audit_context& c, version_audit& v, std::string const& folder,
                                    fdl::version_record const& record);

} // namespace mirror::sync::detail
