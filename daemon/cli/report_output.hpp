#pragma once
// Reports for people (a short summary) and machines (one JSON document; fields in
// docs/cli.md).

#include "core/sync/audit.hpp"
#include "core/sync/report.hpp"
#include "daemon/cli/manifest_spill.hpp"
#include "daemon/metrics/metrics.hpp"
#include "verify/sha256.hpp"
#include "verify/signature_policy.hpp"

#include <sys/resource.h>

#include <optional>
#include <string>

namespace mirror::daemon {

std::string sync_summary(sync::sync_report const& report, std::string const& origin, std::string const& mirror);
std::string sync_json(sync::sync_report const& report, std::string const& origin, std::string const& mirror);

/// How an audit was asked for: what its report states besides the findings, so that the
/// report can stand as evidence (docs/cli.md, "verify --json").
struct audit_setup {
    std::string repository; ///< the location as given (user information in a URL is masked)
    verify::signature_policy policy = verify::signature_policy::off;
    std::string ns = "fdl";
    std::optional<std::string> allowed_signers;                   ///< the keys' file, as given
    std::optional<verify::sha256_digest> allowed_signers_sha256; ///< of the exact bytes parsed
    build_facts tool;          ///< this program, as --version and fdl_mirror_build_info say
    bool full_digests = false; ///< the summary prints whole digests and every file examined
    /// The check of the mirror's attestation (verify --attestation-signers), when made:
    /// its lines lead the summary, its object is the JSON report's "attestation", and its
    /// status counts in the exit code.
    std::optional<std::string> attestation_summary;
    std::optional<std::string> attestation_json;
    int attestation_status = 0;
};

/// The location with any user information of a URL masked: a report never carries a
/// credential, even one the store would refuse.
std::string shown_location(std::string const& location);

/// The most memory this process (RUSAGE_SELF), or the largest of its children that ended
/// (RUSAGE_CHILDREN: its catalog readers, stopped when the pass ends), has had resident
/// at once, as the kernel counts it.
std::uint64_t peak_rss_bytes(int who = RUSAGE_SELF);

/// This build: its version, libssh and OpenSSL (the libraries loaded), and whether it reads
/// catalogs with DuckDB.
build_facts this_build();

/// verify's summary and JSON report, written to `out` a piece at a time; the data files'
/// entries of the versions `spill` holds are copied from it (nullptr: the report holds every
/// entry). False with `problem` set when the spill cannot be read back; what was written
/// before stays written.
bool write_audit_summary(sync::audit_report const& report, audit_setup const& setup, manifest_spill const* spill,
                         text_out const& out, std::string& problem);
bool write_audit_json(sync::audit_report const& report, audit_setup const& setup, manifest_spill const* spill,
                      text_out const& out, std::string& problem);
/// The same reports whole, from a report that holds every entry.
std::string audit_summary(sync::audit_report const& report, audit_setup const& setup);
std::string audit_json(sync::audit_report const& report, audit_setup const& setup);

/// A data file's entry as write_audit_json and write_audit_summary (with --full-digests)
/// write it: what a spill holds.
std::string manifest_entry_json(sync::audited_file const& entry);
std::string manifest_entry_line(sync::audited_file const& entry);

/// "2026-12-01T09:30:00Z" for unix seconds.
std::string utc_text(std::int64_t unix_seconds);

/// "1.5 MiB", "312 B".
std::string human_bytes(std::uint64_t bytes);

} // namespace mirror::daemon
