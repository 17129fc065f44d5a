#pragma once
// The origin's data files, checked against what the mirror copied: the spec keeps data
// files at the origin for good (expiry and withdrawal leave them), and a data file never
// changes. A pass never looks at a data file again once it is in the mirror; this check
// does, by size (a listing of data_dir where the origin can list, a HEAD per file where it
// cannot), for the daemon's optional scheduled audit (origin_check_interval). The mirror's
// ledger is walked a segment at a time, never held whole.

#include "core/io/net.hpp"
#include "core/store/store.hpp"
#include "verify/error.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace mirror::sync {

struct origin_data_report {
    std::uint64_t files = 0; ///< data files of the mirror's ledger compared with the origin
    /// sync_errc::file_deleted_at_origin or data_file_changed_at_origin, each naming the file.
    std::vector<error> violations;
    /// The check stopped: the mirror's fdl.json or ledger cannot be read, or the origin
    /// cannot be listed or asked (not a finding about a file).
    std::optional<error> failure;
};

class transfer_slots;

/// Compares each data file the mirror's ledger records with the origin's: present, and of
/// the recorded size, in the ledger's order (for_each_new_ledger_entries). An origin that
/// cannot list is asked up to `concurrency` files at once, each ask holding one of `shared`
/// (the daemon's max_transfers) when given; the report is the one asking a file at a time
/// gives (a failure stops it at that file). `memory`: what the origin's listing and the
/// walk of the mirror's ledger may each hold (listing_share; 0: no bound).
awaitable<origin_data_report> check_origin_data(store::store& origin, store::store& mirror,
                                                std::size_t concurrency = 1, transfer_slots* shared = nullptr,
                                                std::size_t memory = 0);

} // namespace mirror::sync
