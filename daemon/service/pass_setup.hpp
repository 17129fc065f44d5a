#pragma once
// What a repository's passes are made of, taken from the daemon's configuration: the
// options its stores are opened with, its trusted keys, and its sync options. Pure but
// for reading the allowed_signers file.

#include "config/daemon_config.hpp"
#include "core/store/open_store.hpp"
#include "core/sync/sync_pass.hpp"
#include "verify/signature_policy.hpp"

#include <map>
#include <memory>
#include <string>

namespace mirror::daemon {

/// One throttle per `stores:` entry with limits, shared by every store the entry matches
/// (its limits hold for the endpoint, not per repository), and kept across reloads while
/// the entry's limits stay the same, so that a reload does not grant a fresh burst.
class throttle_registry {
public:
    /// The throttle for `entry`, or null when it sets no limit.
    std::shared_ptr<store::throttle> for_entry(config::store_entry const& entry);
    /// Forgets the entries no longer in `cfg` (after a reload).
    void keep_only(config::daemon_config const& cfg);

private:
    std::map<std::string, std::shared_ptr<store::throttle>> by_match_;
};

/// The options for opening `location` (an origin or a mirror of `cfg`): the matching
/// `stores:` entry's endpoint, region, profile, addressing, credentials file, CA bundle,
/// plain-http allowance, part sizes and rate limits. No entry: the environment and the
/// AWS files decide, as for the command line.
store::store_options store_options_for(config::daemon_config const& cfg, std::string_view location,
                                       throttle_registry& throttles);

/// True when opening `location` under `a` and under `b` gives the same store (same entry
/// settings): a reload that changes neither keeps the store open (connections, cache).
bool same_store_settings(config::daemon_config const& a, config::daemon_config const& b, std::string_view location);

/// The repository's signature policy and trusted keys, read from its allowed_signers file
/// now. An error names the repository, the file and the reason.
result<verify::trust_settings> load_trust(config::repository_config const& repo);

/// DuckDB's memory_limit text for a number of bytes.
std::string duckdb_memory_limit(std::uint64_t bytes);

/// How a command's one memory budget (`sync` and `verify --memory-limit`) is shared, as
/// the daemon's memory_limit is (config::default_duckdb_limit, config::transfer_memory),
/// for the command's one catalog reader.
struct memory_split {
    std::uint64_t duckdb = 0;
    std::uint64_t transfers = 0;
};
memory_split split_memory_limit(std::uint64_t limit);

/// The catalog limits of the configuration, as the sync engine takes them.
sync::catalog_settings catalog_settings_of(config::daemon_config const& cfg);

} // namespace mirror::daemon
