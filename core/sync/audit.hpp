#pragma once
// Auditing a repository (an origin or a mirror) with the checks the publish gate uses.

#include "verify/error.hpp"
#include "core/net.hpp"
#include "core/store/blocking_pool.hpp"
#include "core/store/store.hpp"
#include "core/sync/report.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mirror::sync {

struct version_audit {
    std::string id;
    std::optional<std::uint64_t> seq;
    std::vector<std::string> reached_from; ///< refs whose first-parent history holds it
    bool expired = false;
    bool withdrawn = false;
    std::uint64_t data_files = 0;  ///< data and delete files the version needs
    std::uint64_t data_bytes = 0;
    std::uint64_t data_files_proven = 0; ///< hashed and equal to the mirror's ledger
    std::uint64_t tables = 0;
    std::vector<error> problems;   ///< every failed check, each naming the object
};

struct audit_report {
    std::vector<version_audit> versions; ///< newest first along each ref
    std::vector<error> problems;         ///< refs, refs.json, HEAD, fdl.json
    std::vector<std::string> warnings;
    std::optional<error> fatal;          ///< could not audit at all
    bool io_failure = false;
    std::chrono::milliseconds elapsed{0};

    /// 0 every check passed; 1 a check failed; 3 the repository could not be read.
    int exit_code() const;
};

/// Audits every version reachable from the repository's refs: version.json validity and
/// id, the size and sha256 of the catalog, dataset.json and files.json (unless expired),
/// presence and size of every data file, every path rule; and refs, refs.json and HEAD
/// consistency. In a mirror, every data file the ledger (.fdl-mirror/ledger/) records is
/// hashed and compared with the digest recorded when it was copied. Reads everything it
/// checks; writes nothing.
/// Large chunks are hashed on `pool` when one is given.
awaitable<audit_report> run_audit(store::store& repo, sync_observer* observer, store::blocking_pool* pool = nullptr);

} // namespace mirror::sync
