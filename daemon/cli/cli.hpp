#pragma once
// The command line: parsing into plain structs, and usage text.

#include "config/values.hpp"
#include "daemon/cli/help_text.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace mirror::daemon {

/// Options every command that checks signatures takes (they take effect with the
/// signature verifier; until then a policy other than `off` is refused at startup).
struct signature_options {
    std::optional<std::string> allowed_signers;
    std::optional<config::signature_policy> policy; ///< unset: required with keys, else off
    std::string ns = "fdl";
};

/// How sync and verify reach HTTP(S) stores.
struct network_options {
    bool allow_plain_http = false;         ///< --allow-plain-http
    std::optional<std::string> ca_bundle; ///< --ca-bundle FILE
    std::optional<std::uint64_t> max_requests_per_second; ///< --max-requests-per-second N (origin only)
    std::optional<std::uint64_t> max_bytes_per_second;    ///< --max-bytes-per-second SIZE (origin only)
    std::vector<std::string> redirect_hosts;              ///< --allow-redirect-to HOST, repeatable (origin only)
};

/// --concurrency when not given, for sync and verify alike.
inline constexpr std::size_t default_concurrency = 4;

struct sync_command {
    std::string origin;
    std::string mirror;
    signature_options signatures;
    network_options network;
    bool allow_rewind = false;
    bool json = false;
    bool quick = false; ///< --quick: do not re-examine versions the mirror already published
    std::size_t concurrency = default_concurrency;
    std::size_t max_refs = 10'000;         ///< --max-refs: origin refs taken, by name order
    std::size_t max_ref_name_length = 255; ///< --max-ref-name-length: longer names are refused (bytes)
    /// --memory-limit: the catalog reader's DuckDB and the buffers of data in flight share
    /// it (split_memory_limit). Smaller than the daemon's default, which serves every
    /// repository at once: one repository's S3 uploads at --concurrency 16 go as fast with
    /// six parts of 5 MiB in flight as with twelve of 16 MiB (s3_parts.hpp,
    /// docs/benchmarks.md).
    std::uint64_t memory_limit = std::uint64_t{48} << 20;
    /// --deadline DURATION: the whole sync is cut past it (exit 3); none by default.
    std::optional<std::chrono::milliseconds> deadline;
    /// A partial mirror: --ref PATTERN and --exclude-ref PATTERN (repeatable), --head REF.
    std::vector<std::string> include_refs;
    std::vector<std::string> exclude_refs;
    std::optional<std::string> head;
    std::optional<std::uint64_t> depth; ///< --depth N: shallow history
};

struct verify_command {
    std::string repository; ///< the location; empty with --config
    /// --config FILE --repository NAME [--origin]: the repository's mirror (or origin), its
    /// store settings, keys and policy as the daemon's configuration gives them.
    std::optional<std::string> config;
    std::optional<std::string> configured_repository;
    bool origin = false;
    signature_options signatures;
    network_options network;
    bool json = false;
    bool full_digests = false; ///< --full-digests: the summary prints whole digests and every file examined
    std::vector<std::string> without_keys; ///< --without-key FINGERPRINT, repeatable
    /// --version ID: that one version only (its files, signature, catalog and data files),
    /// instead of every version the refs reach.
    std::optional<std::string> only_version;
    /// --concurrency N: data files checked at once (unset: default_concurrency; with
    /// --config, refused: the repository's `concurrency` applies)
    std::optional<std::size_t> concurrency;
    /// --memory-limit: as sync's; the read buffers of many checks at once stay within it.
    std::uint64_t memory_limit = std::uint64_t{48} << 20;
    /// --deadline DURATION: as sync's.
    std::optional<std::chrono::milliseconds> deadline;
    /// --attestation-signers FILE: check the mirror's attestation against these keys first.
    std::optional<std::string> attestation_signers;
    /// --max-age DURATION: refuse an attestation made longer ago (needs --attestation-signers).
    std::optional<std::chrono::seconds> max_age;
    /// --attestation-only: the attestation's check alone, not the rest of verify.
    bool attestation_only = false;
    /// --attestation-namespace NS: the namespace attestations are signed for.
    std::string attestation_namespace = "fdl-mirror-attestation";
};

/// `check-signature`: like `ssh-keygen -Y verify`; the message comes on standard input.
struct check_signature_command {
    std::string allowed_signers; ///< -f
    std::string principal;       ///< -I
    std::string ns;              ///< -n
    std::string signature_file;  ///< -s
    std::optional<std::string> verify_time; ///< --verify-time YYYYMMDD[HHMM[SS]][Z|UTC]
};

/// `find-principals`: like `ssh-keygen -Y find-principals`: which lines of the file hold
/// the signature's key (and allow the namespace, when -n is given) at the verify time.
struct find_principals_command {
    std::string allowed_signers; ///< -f
    std::string signature_file;  ///< -s
    std::optional<std::string> ns; ///< -n
    std::optional<std::string> verify_time;
};

/// `check-config --config FILE`: validate the daemon's configuration without starting it.
struct check_config_command {
    std::string config;                         ///< --config FILE
    std::optional<std::string> web_config_file; ///< --web.config.file FILE: over the file's web_config_file
};

/// `run --config FILE`: the daemon.
struct run_command {
    std::string config;                         ///< --config FILE
    std::optional<std::string> web_config_file; ///< --web.config.file FILE: over the file's web_config_file
    bool dry_run = false; ///< --once --dry-run: what one pass of each repository would do, nothing written
};

/// `status --config FILE [--json] [--repository NAME]`: what the daemon's passes found, from
/// its state_dir.
struct status_command {
    std::string config; ///< --config FILE
    bool json = false;
    std::optional<std::string> repository; ///< --repository NAME: that one only
};

/// `trigger --config FILE [--repository NAME] [--json]`: asks the running daemon for a pass
/// now (POST /trigger on its listen address).
struct trigger_command {
    std::string config; ///< --config FILE
    bool json = false;
    std::optional<std::string> repository; ///< --repository NAME: that one only
};

/// `pause --config FILE --repository NAME [--reason TEXT]` and `resume --config FILE
/// --repository NAME`: the operator's pause, kept in the repository's mirror.
struct pause_command {
    std::string config;     ///< --config FILE
    std::string repository; ///< --repository NAME (required)
    std::string reason;     ///< --reason TEXT
    bool resume = false;    ///< `resume`: lift the pause
};

/// `compare LOCATION LOCATION... [--json] [--max-lag N] [--attestation-signers FILE]`:
/// several copies of one repository (origins, mirrors) compared.
struct compare_command {
    std::vector<std::string> locations; ///< two or more
    network_options network;            ///< for every location
    bool json = false;
    std::optional<std::uint64_t> max_lag; ///< --max-lag N: a copy further behind on a ref fails
    /// --attestation-signers FILE: a location's attestation signed by these keys (and not
    /// expired) stands for its records.
    std::optional<std::string> attestation_signers;
    std::string attestation_namespace = "fdl-mirror-attestation";
    std::size_t concurrency = default_concurrency;
    /// --memory-limit: as verify's; each location's ledger segments and attestation are
    /// read within it (a peer's 173 MiB segment once took compare to 1.3 GB).
    std::uint64_t memory_limit = std::uint64_t{48} << 20;
};

/// `--help`, `help [COMMAND]` or `COMMAND --help`: `command` empty for the general text.
struct help_command {
    std::string command;
};
struct version_command {};

using command = std::variant<help_command, version_command, sync_command, verify_command, check_signature_command,
                             find_principals_command, check_config_command, run_command, status_command,
                             trigger_command, pause_command, compare_command>;

/// A usage error: the message, to print with the usage text; exit 2.
struct usage_error {
    std::string message;
};

/// Parses argv (without the program name).
std::variant<command, usage_error> parse_command_line(std::vector<std::string> const& args);


} // namespace mirror::daemon
