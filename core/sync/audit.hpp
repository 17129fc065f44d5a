#pragma once
// Auditing a repository (an origin or a mirror) with the checks the publish gate uses.

#include "verify/error.hpp"
#include "core/fdl/refs.hpp"
#include "core/io/net.hpp"
#include "core/io/blocking_pool.hpp"
#include "core/store/store.hpp"
#include "core/sync/catalog_check.hpp"
#include "core/sync/partial.hpp"
#include "core/sync/report.hpp"
#include "verify/sha256.hpp"
#include "verify/signature_policy.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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

/// What a file of the audit's manifest is.
enum class file_role {
    fdl_json, head, refs_json,                                     // the repository's
    version_json, signature, expired_json, catalog, other_catalog, // a version's folder
    dataset_json, files_json, data_file,
};

/// What vouches for a manifest entry's size and digest.
enum class file_voucher {
    computed,     ///< nothing pins it: the audit hashed the bytes it read
    signature,    ///< version.json, whose signature by a trusted key verified
    version_json, ///< size and sha256 pinned by version.json; the audit's hash matched
    ledger,       ///< size and sha256 pinned by the mirror's ledger; the audit's hash matched
    catalog,      ///< a data file whose size the catalog records; not hashed
    files_json,   ///< a data file whose size files.json records; not hashed
    observed,     ///< nothing pins it and its bytes were not hashed: size from a listing or stat
};

/// "version.json", "data_file", …; "computed", "ledger", … (the JSON report's words).
std::string_view role_name(file_role role);
std::string_view voucher_name(file_voucher voucher);

/// One file the audit examined, for the evidence manifest. Sizes and digests are those the
/// audit saw while checking: nothing is read again for the manifest.
struct audited_file {
    std::string path; ///< repository-relative key
    file_role role = file_role::data_file;
    std::optional<std::uint64_t> bytes;          ///< as found; nullopt when missing or unread
    /// Of the bytes the audit hashed (equal to the pin, if any, when `ok`), or the pinned
    /// digest of a shared data file hashed earlier in the audit; nullopt when not hashed.
    std::optional<verify::sha256_digest> sha256;
    file_voucher vouched_by = file_voucher::computed;
    bool ok = true; ///< present, and equal to what vouches for it; content problems are the version's
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
    /// Every file of its folder the audit examined, then the data files it needs (in the
    /// order checked); empty for a version whose version.json was not reached. The data
    /// files' entries go to `audit_options::data_manifest` instead when it takes them.
    std::vector<audited_file> files;
};

/// Takes the data files' entries of each version's manifest as soon as the version's data
/// files are checked, so that an audit of a large repository does not hold every version's
/// manifest until its report is written (verify spills them to a temporary file).
class manifest_sink {
public:
    virtual ~manifest_sink() = default;
    /// The entries of version `version_id`'s data files, in the order checked; called at
    /// most once per version. False if they could not be taken: the version keeps them.
    virtual bool take(std::string const& version_id, std::vector<audited_file> const& entries) = 0;
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
    /// The most data-file checks of a version in flight at once (each a stat, or in a
    /// mirror a read to hash): a distant store costs each one a round trip, so they
    /// overlap. The report is the same whatever the count.
    std::size_t concurrency = 16;
    /// Where the data files' manifest entries go instead of the report; nullptr: the report.
    manifest_sink* data_manifest = nullptr;
    /// What checking one version may take in memory (versions are audited one at a time):
    /// files.json's text, tree and index, dataset.json's text, its catalogs' contents, as
    /// sync's gathering takes them. Past it the file is hashed but not parsed, and the
    /// version has the problem over_memory_limit. 0: no limit but the fixed ones.
    std::uint64_t version_memory = 0;
    /// Audits this version only (`verify --version`): re-verify one version on demand
    /// without walking every ref's history. The repository's own files (fdl.json, the
    /// refs, HEAD) are still checked; a version that is not there is its problem.
    std::optional<std::string> only_version;
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
    std::int64_t started_at = 0; ///< unix seconds; keys' validity windows are checked at this time
    fdl::ref_map refs;                ///< each valid ref -> the version id, as read
    std::optional<std::string> head;  ///< the ref HEAD names, or its version id; nullopt if unreadable
    std::vector<audited_file> files;  ///< fdl.json, HEAD and refs.json, as read
    /// A partial mirror's record of what it follows (`.fdl-mirror/partial`), when it has one.
    std::optional<partial_record> partial;
    /// In a shallow mirror (partial->depth): the first parents its versions name that it does
    /// not hold, as expected below its window; not problems.
    std::vector<std::string> parents_not_held;

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
/// Every file examined is entered in the report's manifests (the repository's `files`, each
/// version's `files`) with the size and digest the checks saw: the manifest costs no read.
awaitable<audit_report> run_audit(store::store& repo, sync_observer* observer, io::blocking_pool* pool = nullptr,
                                  audit_options options = {});

} // namespace mirror::sync
