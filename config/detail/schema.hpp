#pragma once
// The configuration's keys, read from a parsed YAML document into daemon_config. Private
// to config/.

#include "config/daemon_config.hpp"
#include "config/detail/yaml_reader.hpp"

#include <filesystem>
#include <vector>

namespace mirror::config::detail {

/// Reads the top-level mapping `root`: every section, defaults applied, inheritance done,
/// the checks across repositories and stores made. Relative paths resolve against `base`
/// (absolute). Every problem goes to `problems`; the result is meaningful only when none was
/// recorded.
daemon_config read_daemon_config(YAML::Node const& root, std::filesystem::path const& base, problem_list& problems);

/// Reads the `stores` list of the top-level mapping.
std::vector<store_entry> read_stores(map_reader& top, std::filesystem::path const& base);

/// The entry of `stores` whose match is the longest prefix of `location`, or null.
store_entry const* longest_match(std::vector<store_entry> const& stores, std::string_view location) noexcept;

/// What `defaults` or a repository writes, before inheritance: nullopt where unset.
struct partial_settings {
    std::optional<std::chrono::milliseconds> interval;
    std::optional<double> jitter;
    std::optional<std::uint64_t> concurrency;
    std::optional<signature_policy> signatures;
    std::optional<std::string> signature_namespace;
    std::optional<std::filesystem::path> allowed_signers;
    std::optional<bool> allow_rewind;
    std::optional<std::chrono::milliseconds> pass_timeout;
    std::optional<std::chrono::milliseconds> backoff_max;
    std::optional<std::uint64_t> max_refs;
    std::optional<std::uint64_t> max_ref_name_length;
    std::optional<std::chrono::milliseconds> recheck_interval;
    std::optional<std::chrono::milliseconds> scrub_interval;
    std::optional<std::chrono::milliseconds> scrub_period;
    std::optional<std::chrono::milliseconds> origin_check_interval;
    std::optional<std::chrono::milliseconds> compare_interval;
    std::optional<std::uint64_t> peer_max_lag;
    /// `signatures` or `allowed_signers` is written but refused (and recorded): whether
    /// signers are needed is then unknown, and not checked.
    bool signature_keys_refused = false;
};

/// The `defaults` section: as written, and over the built-in defaults.
struct defaults_section {
    partial_settings own;
    repository_settings resolved;
};

/// Reads the `repositories` list of the top-level mapping, each repository's settings
/// over `defaults`, and checks them against each other and against `stores` (a plain-http
/// origin needs a store entry allowing it).
std::vector<repository_config> read_repositories(map_reader& top, defaults_section const& defaults,
                                                 std::vector<store_entry> const& stores,
                                                 std::filesystem::path const& base);

/// Reads the inheritable keys of `section` (`defaults` or one repository).
partial_settings read_partial_settings(map_reader& section, std::filesystem::path const& base);

/// `inherited` with every value `own` sets replaced.
repository_settings apply(partial_settings const& own, repository_settings inherited);

/// The path `key` names, resolved against `base`; nullopt when absent or refused (and recorded).
std::optional<std::filesystem::path> read_path(map_reader& section, std::string_view key,
                                               std::filesystem::path const& base);

} // namespace mirror::config::detail
