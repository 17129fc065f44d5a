#pragma once
// The daemon's configuration file (YAML; docs/configuration.md is the reference): plain
// structs, with every default and inherited value already filled in, and the functions
// that read them reporting every problem at once as `file:line:col: message`.

#include "config/config_problem.hpp"
#include "config/listen_address.hpp"
#include "config/values.hpp"

#include <boost/system/result.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mirror::config {

inline constexpr std::uint64_t mebibyte = std::uint64_t{1} << 20;

enum class log_format { plain, json };
enum class log_level { debug, info, notice, warning, error };

/// How requests name an S3 bucket: "path", "virtual" (virtual-hosted) or "auto".
enum class s3_addressing { path, virtual_hosted, automatic };

std::string_view to_string(log_format format) noexcept;
std::string_view to_string(log_level level) noexcept;
std::string_view to_string(s3_addressing addressing) noexcept; ///< the word the file uses

struct log_settings {
    log_format format = log_format::plain;
    log_level level = log_level::info;
};

/// Limits on reading one frozen DuckLake catalog.
struct catalog_settings {
    std::optional<std::filesystem::path> scratch_dir;                ///< absolute; nullopt: $TMPDIR, else /tmp
    std::uint64_t max_bytes = 1024 * mebibyte;                       ///< largest catalog file fetched
    std::chrono::milliseconds time_limit = std::chrono::seconds(60); ///< for opening and reading one catalog
    /// DuckDB's memory_limit for each reader; unset: a quarter of the daemon's
    /// memory_limit, shared among the readers (at least 16 MiB each).
    std::uint64_t memory_limit = 64 * mebibyte;
    bool memory_limit_set = false; ///< written in the file (else derived from memory_limit)
    /// Catalog reader threads, each with its own DuckDB database; catalogs wait their turn.
    std::uint32_t readers = 1;
};

/// What `defaults` and each repository may set. A repository's copy is resolved: the
/// repository's own value, else the one in `defaults`, else the default shown here.
struct repository_settings {
    std::chrono::milliseconds interval = std::chrono::minutes(5); ///< between the starts of two passes; >= 1s
    double jitter = 0.10;                                         ///< each wait is interval ± up to this fraction
    std::uint32_t concurrency = 16;                               ///< transfers at once for this repository, 1..1024
    signature_policy signatures = signature_policy::required;
    std::string signature_namespace = "fdl"; ///< the key `namespace`
    /// Absolute. nullopt only with `signatures: off` (required and if-present need it).
    std::optional<std::filesystem::path> allowed_signers;
    bool allow_rewind = false;                                      ///< accept a ref moving to a non-descendant
    std::chrono::milliseconds pass_timeout = std::chrono::hours(1); ///< deadline of one pass; >= 1s
    std::chrono::milliseconds backoff_max = std::chrono::hours(1);  ///< cap of the backoff after failed passes; >= 1s
    std::uint32_t max_refs = 10'000;          ///< origin refs taken, by name order; 1..1000000
    std::uint32_t max_ref_name_length = 255;  ///< longer ref names are refused (bytes); 1..4096
    /// How often a pass re-examines the versions the mirror published (late signatures,
    /// expiry, files changed at the origin); the passes between are quick (new versions
    /// and moved refs only). 0: every pass.
    std::chrono::milliseconds recheck_interval = std::chrono::hours(1);
    /// The scrub: every scrub_interval, a slice of the mirror's data files is read again
    /// and checked against the ledger, so that all of them are within scrub_period. A
    /// scrub_period of 0 turns it off.
    std::chrono::milliseconds scrub_interval = std::chrono::hours(1); ///< >= 1s
    std::chrono::milliseconds scrub_period = std::chrono::hours(24 * 30);
    /// How often the origin's data files are compared (by size) with what the mirror
    /// copied: a listing of data_dir where the origin can list, a HEAD per file where it
    /// cannot (HTTP). 0: never (the default).
    std::chrono::milliseconds origin_check_interval{0};
    /// With `peers`: how often the mirror is compared with each peer (>= 1s).
    std::chrono::milliseconds compare_interval = std::chrono::hours(1);
    /// A peer further behind this mirror on a ref (in versions) fires FdlMirrorPeerBehind.
    std::uint32_t peer_max_lag = 3;

    bool operator==(repository_settings const&) const = default;
};

/// Whether daemons that share S3 mirrors coordinate through leases (docs/operations.md,
/// "Running several instances").
enum class coordination_mode {
    automatic, ///< "auto": leases where the mirror honours conditional writes, else one instance
    leases,    ///< leases, and a mirror that does not honour conditional writes is refused
    off,       ///< one instance: leases are kept, but never relied on
};
std::string_view to_string(coordination_mode mode) noexcept; ///< the word the file uses

struct coordination_settings {
    coordination_mode mode = coordination_mode::automatic;
    /// This daemon's name among those sharing the mirrors, [A-Za-z0-9._-]{1,64}; "" for
    /// the host's name.
    std::string instance;
    /// Where the daemons publish heartbeats, to spread the repositories among themselves:
    /// a folder path or an s3:// URL; nullopt: no spreading (leases alone).
    std::optional<std::string> members;
    std::chrono::milliseconds lease_duration = std::chrono::seconds(60); ///< >= 10s
    std::chrono::milliseconds max_clock_skew = std::chrono::seconds(5);  ///< <= lease_duration / 4
    std::chrono::milliseconds heartbeat_interval = std::chrono::seconds(10); ///< <= lease_duration / 2
    bool operator==(coordination_settings const&) const = default;
};

/// The mirror's signed statements about itself (docs/attestations.md): written into each
/// mirror by the daemon that holds it, after its passes.
struct attestation_settings {
    /// The mirror's own private SSH key (unencrypted, readable by its owner only); absolute.
    std::filesystem::path key_file;
    std::string ns = "fdl-mirror-attestation"; ///< the SSHSIG namespace, `namespace`
    /// A pass that changed nothing attests again once the last attestation is this old;
    /// a pass that changed the mirror attests at once. >= 1s.
    std::chrono::milliseconds interval = std::chrono::hours(1);
    /// How long after the pass that verified the mirror an attestation holds (`expires`);
    /// at least twice `interval`.
    std::chrono::milliseconds validity = std::chrono::hours(24);
    bool operator==(attestation_settings const&) const = default;
};

/// Passes started by events (docs/events.md): webhooks (POST /hooks/REPOSITORY) and S3
/// bucket notifications (POST /events/s3), on a listener of their own.
struct events_settings {
    /// The events' own listener: it serves /hooks/ and /events/s3 only. Beyond loopback
    /// only with TLS (web_config_file's tls_server_config), checked as the daemon starts.
    listen_address listen{"127.0.0.1", 9465};
    /// The secrets (config/event_secrets.hpp): each repository's webhook secret, the S3
    /// notifications' token; absolute.
    std::filesystem::path secrets_file;
    /// How far a webhook's timestamp may be from now, either way, >= 10s and <= 1h.
    std::chrono::milliseconds timestamp_window = std::chrono::minutes(5);
    /// At most one pass started by events per repository in this long (0s to 1h): events
    /// that come sooner are coalesced into one pass at its end, the rest counted.
    std::chrono::milliseconds min_pass_gap = std::chrono::seconds(10);
    bool operator==(events_settings const&) const = default;
};

/// Which events may start a repository's passes (`events: [webhook, s3]`).
struct event_sources {
    bool webhook = false;
    bool s3 = false; ///< its origin is an s3:// location
    bool any() const { return webhook || s3; }
    bool operator==(event_sources const&) const = default;
};

/// One repository to mirror.
struct repository_config {
    std::string name;   ///< [A-Za-z0-9][A-Za-z0-9._-]{0,63}: a metric label and a folder name
    std::string origin; ///< an absolute folder path, or a file://, http(s):// or s3:// URL as written
    std::string mirror; ///< an absolute folder path, or a file:// or s3:// URL as written
    /// Other mirrors of the same origin (other regions) this mirror is compared with every
    /// compare_interval, read-only: locations as `origin` takes them.
    std::vector<std::string> peers;
    /// A partial mirror (`refs: { include: [...], exclude: [...] }`): patterns over full ref
    /// names, checked by the daemon (core's fdl::ref_pattern) as it loads the file; empty:
    /// every ref. `head`: the ref HEAD names when the origin's is not followed.
    std::vector<std::string> include_refs;
    std::vector<std::string> exclude_refs;
    std::optional<std::string> head;
    /// Shallow history (`depth: N`): the newest N versions of each followed ref's first-parent
    /// chain; unset: all of it.
    std::optional<std::uint64_t> depth;
    event_sources events; ///< none by default: only the interval (and triggers) start passes
    repository_settings settings;
};

/// How to reach the S3 or HTTP stores whose locations start with `match`. Unset optionals
/// leave the choice to the environment and the AWS files (core's s3::resolve_s3).
struct store_entry {
    std::string match;                       ///< "s3://bucket/", "s3://bucket/prefix/", "https://host/path/"
    std::optional<std::string> endpoint;     ///< s3 only: "https://host[:port]"
    std::optional<std::string> region;       ///< s3 only
    std::optional<std::string> profile;      ///< s3 only: the AWS profile
    std::optional<s3_addressing> addressing; ///< s3 only
    std::optional<std::filesystem::path> credentials_file; ///< s3 only; absolute
    std::optional<std::filesystem::path> ca_bundle;        ///< absolute; nullopt: the system's roots
    bool allow_plain_http = false;                         ///< an http:// endpoint or location is refused without it
    std::optional<std::uint64_t> max_requests_per_second;  ///< nullopt: no limit
    std::optional<std::uint64_t> max_bytes_per_second;     ///< nullopt: no limit
    std::uint64_t part_size = 16 * mebibyte;               ///< s3 only: multipart part size, 5MiB..5GiB
    std::uint64_t multipart_threshold = 16 * mebibyte;     ///< s3 only: objects this large go multipart; 1..5GiB
    std::vector<std::string> redirect_hosts; ///< http(s) only: hosts its redirects may lead to ("host", "host:port")
};

/// The whole file, resolved: defaults applied, inheritance done, paths absolute.
struct daemon_config {
    std::filesystem::path file; ///< the configuration file, absolute
    listen_address listen{"127.0.0.1", 9464};
    /// The endpoints' TLS and basic authentication (config/web_config.hpp), absolute; nullopt:
    /// plain HTTP. The command line's --web.config.file overrides it.
    std::optional<std::filesystem::path> web_config_file;
    std::filesystem::path state_dir = "/var/lib/fdl-mirror";
    log_settings log;
    std::uint32_t max_transfers = 64; ///< transfers at once across all repositories, 1..65536
    /// Passes (with their audits) running at once, first come first served; the others
    /// wait for a slot. Bounds the memory and threads of first passes over many
    /// repositories. 1..1024.
    std::uint32_t max_passes = 4;
    /// The memory for data in flight, DuckDB's included: the catalog readers' limits
    /// (catalogs.readers x catalogs.memory_limit, at most half of it) and, from the rest,
    /// S3 upload buffers and the passes' look-ahead. Work that finds it spent waits.
    std::uint64_t memory_limit = 256 * mebibyte;
    /// Threads for blocking file work and hashing, shared by every pass; 0: as many as the
    /// machine's cores, from 2 to 8.
    std::uint32_t threads = 0;
    std::chrono::milliseconds shutdown_timeout =
        std::chrono::seconds(30); ///< grace after SIGTERM before passes are cut
    catalog_settings catalogs;
    coordination_settings coordination;
    std::optional<attestation_settings> attestation; ///< nullopt: mirrors are not attested
    std::optional<events_settings> events;           ///< nullopt: no event listener
    repository_settings defaults;                ///< as written in `defaults` over the built-in ones
    std::vector<repository_config> repositories; ///< at least one, in file order
    std::vector<store_entry> stores;             ///< in file order
};

/// A configuration, or every problem found in it.
using load_result = boost::system::result<daemon_config, config_problems>;

/// Reads and checks the YAML configuration in `text`. `file_name` is used in messages
/// and locates relative paths: they resolve against its folder, made absolute against
/// the current directory. Reports every problem (syntax errors stop the reading, since
/// nothing after them can be trusted). Reads no file, the ones the configuration names
/// included; never throws but std::bad_alloc.
load_result parse_config(std::string_view text, std::string_view file_name);

/// Reads the file at `path` (at most 4 MiB) and parses it as parse_config does, with
/// `path` as the file name. A file that cannot be read is one problem at line 0.
load_result load_config(std::filesystem::path const& path);

/// Where the file at `path` puts the state folder, read leniently for `status` when the
/// file has problems: its top-level `state_dir` if the YAML parses that far (relative to
/// the file's folder), else the default. Never fails.
std::filesystem::path state_dir_hint(std::filesystem::path const& path);

/// How one memory limit is shared, the daemon's `memory_limit` and a command's
/// `--memory-limit` alike: each of `readers` DuckDB databases gets a quarter of it among
/// them (at least 16 MiB each), unless the limit per reader is given...
std::uint64_t default_duckdb_limit(std::uint64_t memory_limit, std::uint32_t readers) noexcept;
/// ...and transfers and the look-ahead get what DuckDB's `duckdb` bytes leave (half of the
/// limit, should DuckDB's floor leave less).
std::uint64_t transfer_memory(std::uint64_t memory_limit, std::uint64_t duckdb) noexcept;
/// The memory the whole service may take, its catalog readers' processes included: the
/// daemon's memory_limit and fixed overhead (the program and its libraries, 32 MiB), and
/// for each reader the address space past its DuckDB limit (1 GiB, as
/// core/catalog/sandboxed_reader.cpp sets it). What MemoryMax= must allow.
std::uint64_t service_memory(daemon_config const& cfg) noexcept;
/// transfer_memory of a configuration, with its readers' DuckDB limits.
std::uint64_t transfer_memory(daemon_config const& cfg) noexcept;
/// The threads of the blocking pool: `threads`, or the machine's cores from 2 to 8.
std::size_t blocking_threads(daemon_config const& cfg) noexcept;

/// The entry of `cfg.stores` whose `match` is the longest prefix of `location`, or null.
/// A match ends at a '/' boundary: "s3://bucket/pre" matches "s3://bucket/pre/x" but
/// not "s3://bucket/prefix/".
store_entry const* match_store(daemon_config const& cfg, std::string_view location) noexcept;

} // namespace mirror::config
