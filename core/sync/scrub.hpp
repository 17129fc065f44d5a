#pragma once
// The scrub: the mirror's data files read again, a slice at a time, and checked against the
// size and SHA-256 its ledger recorded when each was copied (like `restic check
// --read-data-subset`), so that damage to the mirror's own bytes (a disk, a bucket, a
// hand) is found without waiting for someone to run `verify`. The daemon runs one step
// per scrub_interval, sized so that a round covers every data file within scrub_period.

#include "core/io/net.hpp"
#include "core/io/blocking_pool.hpp"
#include "core/store/store.hpp"
#include "verify/error.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mirror::sync {

class transfer_slots;

/// Where a round of the scrub stands; kept by the caller across steps (and restarts).
struct scrub_position {
    std::string after;                       ///< the last data file (under data_dir) checked this round; "" at its start
    double round_started = 0;                ///< unix seconds; 0 before the first step
    std::uint64_t round_bytes = 0;           ///< read so far this round
    std::optional<double> last_round_completed; ///< unix seconds: when a round last reached the end

    friend bool operator==(scrub_position const&, scrub_position const&) = default;
};

struct scrub_step_report {
    std::uint64_t files = 0; ///< data files read and checked by this step
    std::uint64_t bytes = 0;
    std::uint64_t ledger_files = 0; ///< in the ledger: what a round covers
    std::uint64_t ledger_bytes = 0;
    /// Data files whose bytes no longer match the ledger: sync_errc::size_mismatch,
    /// sha256_mismatch or missing_file, each naming the key.
    std::vector<error> findings;
    bool round_completed = false;
    /// The step stopped early: the ledger or fdl.json cannot be read, or a read failed for
    /// another reason than the file's content (the next step starts from the same file).
    std::optional<error> failure;
};

/// Reads the mirror's data files after `position.after`, in name order, and checks each
/// against the ledger, until `fraction` of the ledger's bytes have been read (at least one
/// file); at the end of the list the round is complete and the next step starts a new one.
/// Updates `position`. `now` is unix seconds. Up to `concurrency` files are read at once;
/// what the step covers, finds and where it stops are those of one read at a time. With
/// `shared`, each read also holds one of its slots (the daemon's max_transfers, which the
/// passes' copies hold too), so that audits and passes together stay within it.
/// `memory`: what its walk of the ledger may hold at once (ledger_reads::memory; 0: no bound
/// but a segment's 256 MiB).
awaitable<scrub_step_report> scrub_step(store::store& mirror, scrub_position& position, double fraction,
                                        io::blocking_pool* pool, double now, std::size_t concurrency = 16,
                                        transfer_slots* shared = nullptr, std::size_t memory = 0);

} // namespace mirror::sync
