#pragma once
// What one sync pass did, for people (daemon/report_text) and machines (--json).

#include "verify/error.hpp"
#include "verify/signature_policy.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace mirror::sync {

struct held_version {
    std::string id;
    error why; ///< code: sync_errc, fdl_errc or store_errc; message names the object
};

/// A version a dry run would publish, and what publishing it would copy into the mirror.
struct planned_version {
    std::string id;
    std::uint64_t files = 0;      ///< objects written, data files included (not the ledger's segment)
    std::uint64_t bytes = 0;      ///< their bytes, as the version pins them
    std::uint64_t data_files = 0; ///< of `files`, data files the mirror lacks (shared ones counted once)
    std::uint64_t data_bytes = 0;
};

struct ref_change {
    std::string name;
    std::optional<std::string> from; ///< absent when the ref is new in the mirror
    std::string to;
};

/// Where an origin ref stands in the mirror once a pass is over: the drift a monitor
/// watches.
struct ref_state {
    std::string name;
    std::string origin_target;
    std::optional<std::string> mirror_target; ///< absent when the mirror lacks the ref
    /// Versions on the origin ref's first-parent line that the mirror has not published,
    /// counted from its target back to the first version the mirror has (as far as this
    /// pass read the line). 0 for a ref in sync, and for a moved tag.
    std::uint64_t versions_behind = 0;
    bool in_sync() const { return mirror_target == origin_target; }
};

struct sync_report {
    /// What a partial mirror follows (describe_partial: "follows refs/tags/*, depth 3"); ""
    /// for a mirror of everything.
    std::string partial;
    std::vector<std::string> published;      ///< versions published by this pass, in order
    std::vector<held_version> held;          ///< versions not published, with why
    /// Versions published by this pass with a problem that does not hold them (a files.json
    /// that disagrees with the catalog, the authority), one entry per problem.
    std::vector<held_version> published_with_problems;
    /// Versions the mirror published in earlier passes whose signature this pass's policy
    /// and keys would not accept (a policy tightened, a key revoked): re-examined passes only.
    std::vector<held_version> unverified;
    std::vector<error> violations;           ///< broken promises of the origin; mirror kept its copy
    std::vector<std::string> warnings;       ///< worth knowing, not a failure
    /// Origin refs whose content was no version id on two reads a moment apart, this pass:
    /// for the next pass's sync_options::unsettled_before.
    std::set<std::string> unsettled_refs;
    /// Lines of the trusted keys' allowed_signers file that do not parse, skipped (each is
    /// also a warning): fdl_mirror_allowed_signers_problems.
    std::size_t allowed_signers_skipped = 0;
    std::vector<ref_change> refs_updated;    ///< refs moved or created in the mirror
    /// Under sync_options::plan_only: the versions the pass would publish, oldest first,
    /// with what each would copy (those it would hold are in `held`, with why), and
    /// whether it would create the mirror's fdl.json (a new mirror).
    std::vector<planned_version> planned;
    bool planned_fdl_json = false;
    std::vector<std::string> followed;       ///< allowed late changes taken: expiry, signature, catalog
    std::vector<ref_state> refs;             ///< each origin ref after the pass; empty when it stopped early
    std::map<std::string, verify::signer_info> signers; ///< who signed each version published or followed
    verify::key_differences announced_keys;  ///< fdl.json's signers against the trusted keys
    std::uint64_t files_copied = 0;
    std::uint64_t bytes_copied = 0;
    /// Data files (and their bytes) that versions not yet published still need in the
    /// mirror when the pass ended: 0 after a pass that published everything.
    std::uint64_t pending_files = 0;
    std::uint64_t pending_bytes = 0;
    std::optional<std::uint64_t> versions_in_mirror; ///< published versions after the pass, when known
    std::optional<error> fatal;              ///< the pass stopped early (refused or I/O)
    /// What the pass saw of each side's medium: true once it read the origin's fdl.json and
    /// refs (origin), or read the mirror and wrote what it had to without a failure of the
    /// mirror (mirror); false when a request to that side failed as an I/O failure does
    /// (is_io_failure); absent when the pass did not get to it. Monitors report only this.
    std::optional<bool> origin_up;
    std::optional<bool> mirror_up;
    bool io_failure = false;                 ///< an origin read or mirror write failed
    std::chrono::milliseconds elapsed{0};

    /// 0 all mirrored and verified; 1 something held, a violation, a version published
    /// with a problem or one the policy no longer accepts; 3 I/O failure.
    int exit_code() const;
};

/// Progress callbacks for long copies; called on the I/O thread.
class sync_observer {
public:
    virtual ~sync_observer();
    virtual void copying(std::string const& key, std::uint64_t bytes_expected) = 0;
    virtual void copied(std::string const& key, std::uint64_t bytes) = 0;
};

/// The ref and the version a problem of this engine is about, as its message names them
/// first ("refs/tags/v1: …", "origin: refs/heads/main: …", "versions/<id>/version.json:
/// …"): for the fields of log lines. Empty where the message names neither.
struct problem_subject {
    std::string ref;
    std::string version;
};
problem_subject subject_of(error const& problem);

/// True when `code` says the medium failed (exit 3) rather than the content (exit 1).
bool is_io_failure(boost::system::error_code const& code) noexcept;

} // namespace mirror::sync
