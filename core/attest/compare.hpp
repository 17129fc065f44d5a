#pragma once
// Several copies of one repository compared (`fdl-mirror compare`, and the daemon's `peers:`):
// whether they hold the same repository, where each ref stands in each, and whether any
// version differs between two of them. The same version id with other bytes anywhere is a
// divergence; a copy whose ref is older on the same line is lag.

#include "core/fdl/refs.hpp"
#include "core/io/net.hpp"
#include "core/attest/statement.hpp"
#include "core/store/store.hpp"
#include "core/sync/partial.hpp"
#include "verify/allowed_signers.hpp"
#include "verify/error.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mirror::attest {

/// One copy as read for the comparison.
struct location_state {
    std::string name; ///< the location as shown (no credentials)
    std::optional<std::string> repository_id;
    fdl::ref_map refs;
    std::map<std::string, std::string, std::less<>> versions;      ///< id -> version.json sha256
    std::map<std::string, std::string, std::less<>> first_parents; ///< id -> first parent ("" for a root), as read
    /// A mirror's ledger (.fdl-mirror/ledger/): data file path -> "BYTES sha256", when it
    /// keeps one; empty for an origin, or a copy read from its attestation.
    std::map<std::string, std::string, std::less<>> data_files;
    bool from_attestation = false; ///< read from its attestation rather than its records
    std::optional<std::int64_t> attested_at;
    /// What a partial mirror follows (its `.fdl-mirror/partial`); nullopt for a full copy.
    std::optional<sync::partial_record> partial;
};

struct read_settings {
    /// The keys an attestation must be signed by to be used instead of the records; null:
    /// the records are read.
    verify::allowed_signers const* trusted = nullptr;
    std::string ns;
    std::int64_t now = 0;
    std::size_t concurrency = 8;
    std::size_t max_versions = 1'000'000; ///< a walk of a store that cannot list stops past this
    std::size_t max_attestation_bytes = attest::max_attestation_bytes; ///< attestation_limit of the budget
    std::size_t ledger_memory = 0; ///< what a ledger walk may hold at once (sync::ledger_reads::memory)
};

/// Reads a copy: from its attestation when `settings.trusted` accepts it and it has not
/// expired (the statement's refs and versions, no other read); else from its records: a
/// store that can list is read as read_mirror_state reads it, one that cannot (HTTP) through
/// its refs and the versions they reach by their parents.
awaitable<result<location_state>> read_location(store::store& from, std::string name, read_settings const& settings);

struct ref_comparison {
    std::string name;
    std::vector<std::optional<std::string>> targets; ///< by location; nullopt: absent there
    /// Versions behind the most advanced copy on the ref's line, by location; nullopt for
    /// the copies that are not on one line with it (a divergence) or whose distance could
    /// not be told.
    std::vector<std::optional<std::uint64_t>> behind;
};

struct comparison {
    std::vector<std::string> divergences; ///< each names the object and the copies
    std::vector<std::string> lags;        ///< each copy behind on a ref, by how much
    std::vector<std::string> not_followed; ///< refs a partial copy does not follow: neither lag nor divergence
    std::vector<ref_comparison> refs;     ///< by name
    std::vector<std::uint64_t> most_behind; ///< by location: the most versions behind on any ref
    std::size_t versions_in_several = 0;    ///< versions held by more than one copy, compared
    std::size_t data_files_in_several = 0;  ///< data files recorded by more than one ledger, compared
};

/// Compares the copies. Where a ref's line needs parents no copy's records gave (a copy
/// read from its attestation), `stores` (one per state, in the same order) are asked for
/// the versions' records.
awaitable<comparison> compare_locations(std::vector<location_state> states, std::vector<store::store*> stores);

} // namespace mirror::attest
