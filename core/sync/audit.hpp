#pragma once
// Auditing a repository (an origin or a mirror) with the checks the publish gate uses.

#include "verify/error.hpp"
#include "core/net.hpp"
#include "core/store/blocking_pool.hpp"
#include "core/store/store.hpp"
#include "core/sync/catalog_check.hpp"
#include "core/sync/report.hpp"
#include "verify/signature_policy.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mirror::sync {

/// What a version's catalog holds at its last snapshot, as the audit read it.
struct catalog_summary {
    std::string format;
    std::uint64_t snapshot = 0;
    std::uint64_t tables = 0;
    std::uint64_t data_files = 0;   ///< live data files
    std::uint64_t delete_files = 0; ///< live delete files
    std::uint64_t bytes = 0;        ///< of every file the version needs
    std::vector<std::string> renamed_column_tables; ///< "schema.table"
    std::vector<std::string> tables_with_deletes;   ///< "schema.table"
    std::vector<std::string> views;                 ///< "schema.view"
    std::vector<std::string> other_formats_checked; ///< catalogs/<format>.duckdb read and compared
};

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
    /// Where the data files came from: "catalog", "files.json", or "none" (not checked).
    std::string data_source = "none";
    std::optional<catalog_summary> catalog; ///< when the catalog was read
    /// "valid", "missing", "not checked" (policy off), or why it failed ("untrusted_key"…).
    std::string signature = "not checked";
    std::optional<verify::signer_info> signer;
    std::vector<error> problems;   ///< every failed check, each naming the object
};

/// One trusted key's share of the repository's signatures.
struct key_summary {
    std::string fingerprint;
    std::string principals;
    std::size_t versions = 0;
    std::string newest; ///< the newest version it signed (version IDs sort by creation)
};

/// What to audit besides integrity.
struct audit_options {
    verify::trust_settings trust;        ///< the policy the signatures are held to
    std::vector<std::string> without_keys; ///< fingerprints whose revocation to assess
    catalog_settings catalogs;             ///< where and how frozen catalogs are read
};

struct audit_report {
    std::vector<version_audit> versions; ///< newest first along each ref
    std::vector<error> problems;         ///< refs, refs.json, HEAD, fdl.json
    std::vector<std::string> warnings;
    std::vector<key_summary> keys;            ///< trusted keys that signed audited versions
    std::vector<std::string> unsigned_versions; ///< signed by no trusted key
    std::vector<std::string> would_lose_trust;  ///< signed only by a key in without_keys
    std::optional<error> fatal;          ///< could not audit at all
    bool io_failure = false;
    std::chrono::milliseconds elapsed{0};

    /// 0 every check passed; 1 a check failed; 3 the repository could not be read.
    int exit_code() const;
};

/// Audits every version reachable from the repository's refs: version.json validity and
/// id, the size and sha256 of the catalog, dataset.json and files.json (unless expired),
/// the catalog's own checks (snapshot, format, paths inside data_dir, no inlined rows,
/// files.json and catalogs/* agreeing with it) where this build reads catalogs,
/// presence and size of every data file the catalog (else files.json) names, every path rule; and refs, refs.json and HEAD
/// consistency. In a mirror, every data file the ledger (.fdl-mirror/ledger/) records is
/// hashed and compared with the digest recorded when it was copied. Reads everything it
/// checks; writes nothing.
/// Large chunks are hashed on `pool` when one is given.
/// Each version's signature is checked under `options.trust` (a version that fails the
/// policy fails the audit) and summarised per key.
awaitable<audit_report> run_audit(store::store& repo, sync_observer* observer, store::blocking_pool* pool = nullptr,
                                  audit_options options = {});

} // namespace mirror::sync
