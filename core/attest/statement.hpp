#pragma once
// What a mirror states about itself, signed (docs/attestations.md): an in-toto Statement
// v1 whose subjects are the mirror's refs (each by the sha256 of its target's
// version.json) and its fdl.json, and whose predicate (this project's own type, versioned)
// says which repository it is, from which origin, when it was last verified against that
// origin, until when the statement holds, under which signature policy, and each version
// the mirror publishes.

#include "verify/error.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mirror::attest {

inline constexpr std::string_view statement_type = "https://in-toto.io/Statement/v1";
inline constexpr std::string_view predicate_type = "urn:fdl-mirror:predicate:mirror-state:v1";
/// Where the mirror keeps its attestation (readers of the FDL layout ignore `.fdl-mirror/`).
inline constexpr std::string_view attestation_key = ".fdl-mirror/attestation.json";
/// The SSHSIG namespace attestations are signed for: never a version's ("fdl"), so that
/// neither signature can stand for the other.
inline constexpr std::string_view default_namespace = "fdl-mirror-attestation";
/// The most an attestation may weigh: a statement of 100,000 versions is about 20 MiB.
inline constexpr std::size_t max_attestation_bytes = std::size_t{64} << 20;

/// The most an attestation may weigh in a process whose memory budget holds `capacity`
/// bytes (0: no budget): an eighth of it, at least 1 MiB, at most max_attestation_bytes.
/// Opening one costs a few times its size (its text, the payload decoded, two trees):
/// a planted 62 MiB attestation once took `verify` to 458 MiB (issue 45).
std::size_t attestation_limit(std::uint64_t capacity);

struct attested_ref {
    std::string name;                ///< "refs/heads/main"
    std::string version;             ///< the version id it names
    std::string version_json_sha256; ///< of that version's version.json in the mirror
    friend bool operator==(attested_ref const&, attested_ref const&) = default;
};

struct attested_version {
    std::string id;
    std::string version_json_sha256;
    std::string signer; ///< "SHA256:…" of the key whose signature the gate accepted; "" when none was checked
    friend bool operator==(attested_version const&, attested_version const&) = default;
};

struct signature_policy_text {
    std::string mode = "off"; ///< "required", "if-present" or "off"
    std::string ns = "fdl";
    std::string allowed_signers_sha256; ///< of the trusted keys' file's bytes; "" when there is none
    friend bool operator==(signature_policy_text const&, signature_policy_text const&) = default;
};

struct mirror_statement {
    std::string fdl_json_sha256;
    std::vector<attested_ref> refs; ///< by name
    std::string repository_id;
    std::string origin;  ///< the origin's location, credentials and query taken out
    std::string mirror;  ///< the mirror's location, the same way
    std::int64_t attested_at = 0; ///< unix seconds, when the statement was made
    std::int64_t verified_at = 0; ///< when the pass that last compared the mirror with its origin began
    std::int64_t expires = 0;     ///< verified_at plus the freshness window
    signature_policy_text signature_policy;
    std::vector<attested_version> versions; ///< every version the mirror publishes, by id
    std::string tool_version;
    std::string instance;                    ///< the daemon (coordination instance) that attested
    std::optional<std::uint64_t> fencing_token; ///< of its lease, when it held one
    friend bool operator==(mirror_statement const&, mirror_statement const&) = default;
};

/// The statement as JSON text (keys in a fixed order, one line, a newline at the end).
std::string render_statement(mirror_statement const& statement);

/// Reads a statement rendered by render_statement (or by another writer of the same
/// type): `_type` and `predicateType` must be these; every field is checked for its type
/// and form (ids, digests, times). Fails with attest_errc::malformed, naming the field.
result<mirror_statement> parse_statement(std::string_view text);

/// The memory a statement's tree may take: twice its text and 1 MiB (a statement of many
/// versions costs about its size; one of tiny values, many times it, is refused).
std::size_t statement_tree_limit(std::size_t text_bytes);

/// "2026-12-05T13:00:00Z" for unix seconds, and back (exactly that form; nullopt otherwise).
std::string utc_time_text(std::int64_t unix_seconds);
std::optional<std::int64_t> parse_utc_time(std::string_view text);

/// A location with its user information, query and fragment taken out (a presigned URL's
/// signature, a password): what a statement may say of where it came from.
std::string location_without_secrets(std::string_view location);

} // namespace mirror::attest
