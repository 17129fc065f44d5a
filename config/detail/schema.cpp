#include "config/detail/schema.hpp"

#include "config/detail/locations.hpp"
#include "config/units.hpp"

#include <cctype>
#include <limits>

namespace mirror::config::detail {

using std::chrono::milliseconds;

std::optional<std::filesystem::path> read_path(map_reader& section, std::string_view key,
                                               std::filesystem::path const& base) {
    auto found = section.scalar(key, "a path");
    if (!found)
        return std::nullopt;
    auto path = resolve_path(found->first, base);
    if (!path.value)
        section.problems().add(found->second, section.subject(key) + " " + quote(found->first) + " " + path.why);
    return path.value;
}

partial_settings read_partial_settings(map_reader& section, std::filesystem::path const& base) {
    partial_settings out;
    out.interval = section.duration("interval", std::chrono::seconds(1));
    out.jitter = section.percentage("jitter");
    out.concurrency = section.count("concurrency", 1024);
    out.signatures = section.word<signature_policy>("signatures", {{"required", signature_policy::required},
                                                                   {"if-present", signature_policy::if_present},
                                                                   {"off", signature_policy::off}});
    out.signature_namespace = section.text("namespace");
    out.allowed_signers = read_path(section, "allowed_signers", base);
    out.allow_rewind = section.flag("allow_rewind");
    out.pass_timeout = section.duration("pass_timeout", std::chrono::seconds(1));
    out.backoff_max = section.duration("backoff_max", std::chrono::seconds(1));
    out.max_refs = section.count("max_refs", 1'000'000);
    out.max_ref_name_length = section.count("max_ref_name_length", 4096);
    out.recheck_interval = section.duration("recheck_interval", std::chrono::milliseconds(0));
    out.scrub_interval = section.duration("scrub_interval", std::chrono::seconds(1));
    out.scrub_period = section.duration("scrub_period", std::chrono::milliseconds(0));
    out.origin_check_interval = section.duration("origin_check_interval", std::chrono::milliseconds(0));
    out.compare_interval = section.duration("compare_interval", std::chrono::seconds(1));
    out.peer_max_lag = section.count("peer_max_lag", 1'000'000);
    out.signature_keys_refused =
        (section.find("signatures") && !out.signatures) || (section.find("allowed_signers") && !out.allowed_signers);
    return out;
}

repository_settings apply(partial_settings const& own, repository_settings inherited) {
    repository_settings& out = inherited;
    out.interval = own.interval.value_or(out.interval);
    out.jitter = own.jitter.value_or(out.jitter);
    out.concurrency = static_cast<std::uint32_t>(own.concurrency.value_or(out.concurrency));
    out.signatures = own.signatures.value_or(out.signatures);
    out.signature_namespace = own.signature_namespace.value_or(out.signature_namespace);
    if (own.allowed_signers)
        out.allowed_signers = own.allowed_signers;
    out.allow_rewind = own.allow_rewind.value_or(out.allow_rewind);
    out.pass_timeout = own.pass_timeout.value_or(out.pass_timeout);
    out.backoff_max = own.backoff_max.value_or(out.backoff_max);
    out.max_refs = static_cast<std::uint32_t>(own.max_refs.value_or(out.max_refs));
    out.max_ref_name_length = static_cast<std::uint32_t>(own.max_ref_name_length.value_or(out.max_ref_name_length));
    out.recheck_interval = own.recheck_interval.value_or(out.recheck_interval);
    out.scrub_interval = own.scrub_interval.value_or(out.scrub_interval);
    out.scrub_period = own.scrub_period.value_or(out.scrub_period);
    out.origin_check_interval = own.origin_check_interval.value_or(out.origin_check_interval);
    out.compare_interval = own.compare_interval.value_or(out.compare_interval);
    out.peer_max_lag = static_cast<std::uint32_t>(own.peer_max_lag.value_or(out.peer_max_lag));
    return out;
}

namespace {

log_settings read_log(map_reader& top, problem_list& problems) {
    log_settings out;
    auto node = top.mapping("log");
    if (!node)
        return out;
    map_reader log(*node, "log", problems);
    out.format =
        log.word<log_format>("format", {{"plain", log_format::plain}, {"json", log_format::json}}).value_or(out.format);
    out.level = log.word<log_level>("level", {{"debug", log_level::debug},
                                              {"info", log_level::info},
                                              {"notice", log_level::notice},
                                              {"warning", log_level::warning},
                                              {"error", log_level::error}})
                    .value_or(out.level);
    log.finish();
    return out;
}

/// DuckDB's part of memory_limit: a quarter among the readers unless written, and never
/// more than half, so that transfers keep at least the other half. A file that sets the
/// readers' limit but not memory_limit (written before memory_limit was) gets a
/// memory_limit twice theirs.
void share_memory(daemon_config& cfg, map_reader& top, bool memory_limit_set) {
    auto& catalogs = cfg.catalogs;
    if (!catalogs.memory_limit_set)
        catalogs.memory_limit = default_duckdb_limit(cfg.memory_limit, catalogs.readers);
    std::uint64_t const duckdb = catalogs.memory_limit * catalogs.readers;
    if (!memory_limit_set)
        cfg.memory_limit = std::max(cfg.memory_limit, 2 * duckdb);
    if (duckdb > cfg.memory_limit / 2)
        top.problems().add(top.key_mark(catalogs.memory_limit_set ? "catalogs" : "memory_limit"),
                           "catalogs: readers x memory_limit (" + std::to_string(duckdb >> 20) +
                               " MiB) is more than half of memory_limit (" + std::to_string(cfg.memory_limit >> 20) +
                               " MiB): raise memory_limit or lower catalogs.memory_limit");
}

catalog_settings read_catalogs(map_reader& top, std::filesystem::path const& base, problem_list& problems) {
    catalog_settings out;
    auto node = top.mapping("catalogs");
    if (!node)
        return out;
    map_reader catalogs(*node, "catalogs", problems);
    out.scratch_dir = read_path(catalogs, "scratch_dir", base);
    auto constexpr largest = std::numeric_limits<std::uint64_t>::max();
    out.max_bytes = catalogs.size("max_bytes", 1, largest).value_or(out.max_bytes);
    out.time_limit = catalogs.duration("time_limit", std::chrono::seconds(1)).value_or(out.time_limit);
    // DuckDB refuses less than a few MiB for any real catalog; 16MiB is a floor with room.
    if (auto limit = catalogs.size("memory_limit", 16 * mebibyte, largest)) {
        out.memory_limit = *limit;
        out.memory_limit_set = true;
    }
    out.readers = static_cast<std::uint32_t>(catalogs.count("readers", 16).value_or(out.readers));
    catalogs.finish();
    return out;
}

bool is_instance_name(std::string_view name) {
    if (name.empty() || name.size() > 64)
        return false;
    for (char c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-')
            return false;
    return true;
}

coordination_settings read_coordination(map_reader& top, std::filesystem::path const& base, problem_list& problems) {
    coordination_settings out;
    auto node = top.mapping("coordination");
    if (!node)
        return out;
    map_reader coordination(*node, "coordination", problems);
    out.mode = coordination
                   .word<coordination_mode>("mode", {{"auto", coordination_mode::automatic},
                                                     {"leases", coordination_mode::leases},
                                                     {"off", coordination_mode::off}})
                   .value_or(out.mode);
    if (auto found = coordination.scalar("instance", "a name such as host-a")) {
        if (is_instance_name(found->first))
            out.instance = found->first;
        else
            problems.add(found->second, coordination.subject("instance") + " " + quote(found->first) +
                                            " is not a name of 1 to 64 letters, digits, '.', '_' or '-'");
    }
    if (auto found = coordination.scalar("members", "a location")) {
        auto location = resolve_location(found->first, location_role::mirror, base);
        if (location.value)
            out.members = *location.value;
        else
            problems.add(found->second, coordination.subject("members") + " " +
                                            quote(shown_location(found->first)) + " " + location.why);
    }
    out.lease_duration = coordination.duration("lease_duration", std::chrono::seconds(10)).value_or(out.lease_duration);
    auto skew = coordination.duration("max_clock_skew", milliseconds(0));
    auto heartbeat = coordination.duration("heartbeat_interval", std::chrono::seconds(1));
    out.max_clock_skew = skew.value_or(out.max_clock_skew);
    out.heartbeat_interval = heartbeat.value_or(out.heartbeat_interval);
    if (out.max_clock_skew > out.lease_duration / 4)
        problems.add(node->Mark(), "coordination: max_clock_skew must be at most a quarter of lease_duration (" +
                                       std::to_string(out.lease_duration.count() / 4000) + "s)");
    if (out.heartbeat_interval > out.lease_duration / 2)
        problems.add(node->Mark(), "coordination: heartbeat_interval must be at most half of lease_duration (" +
                                       std::to_string(out.lease_duration.count() / 2000) + "s)");
    coordination.finish();
    return out;
}

std::optional<attestation_settings> read_attestation(map_reader& top, std::filesystem::path const& base,
                                                    problem_list& problems) {
    auto node = top.mapping("attestation");
    if (!node)
        return std::nullopt;
    map_reader section(*node, "attestation", problems);
    attestation_settings out;
    auto key = read_path(section, "key_file", base);
    if (auto ns = section.text("namespace"))
        out.ns = *ns;
    out.interval = section.duration("interval", std::chrono::seconds(1)).value_or(out.interval);
    out.validity = section.duration("validity", std::chrono::seconds(2)).value_or(out.validity);
    if (out.validity < 2 * out.interval)
        problems.add(node->Mark(), "attestation: validity must be at least twice interval, so that an attestation "
                                   "is renewed before it expires");
    bool const key_written = section.find("key_file").has_value(); // refused when unread: already reported
    section.finish();
    if (!key) {
        if (!key_written)
            problems.add(node->Mark(), "attestation: key_file is required (the mirror's own private SSH key)");
        return std::nullopt;
    }
    out.key_file = *key;
    return out;
}

std::optional<events_settings> read_events(map_reader& top, std::filesystem::path const& base, problem_list& problems) {
    auto node = top.mapping("events");
    if (!node)
        return std::nullopt;
    map_reader section(*node, "events", problems);
    events_settings out;
    if (auto found = section.scalar("listen", "host:port such as 127.0.0.1:9465")) {
        if (auto address = parse_listen_address(found->first))
            out.listen = *address;
        else
            problems.add(found->second, "events: listen " + quote(found->first) +
                                            " is not host:port with a port from 0 to 65535");
    }
    auto secrets = read_path(section, "secrets_file", base);
    out.timestamp_window = section.duration("timestamp_window", std::chrono::seconds(10)).value_or(out.timestamp_window);
    if (out.timestamp_window > std::chrono::hours(1))
        problems.add(node->Mark(), "events: timestamp_window must be at most 1h: a longer one lets a captured "
                                   "webhook be replayed for longer");
    out.min_pass_gap = section.duration("min_pass_gap", std::chrono::seconds(0)).value_or(out.min_pass_gap);
    if (out.min_pass_gap > std::chrono::hours(1))
        problems.add(node->Mark(), "events: min_pass_gap must be at most 1h: the interval polls anyway");
    bool const written = section.find("secrets_file").has_value();
    section.finish();
    if (!secrets) {
        if (!written)
            problems.add(node->Mark(), "events: secrets_file is required (the webhooks' secrets, the S3 "
                                       "notifications' token)");
        return std::nullopt;
    }
    out.secrets_file = *secrets;
    return out;
}

defaults_section read_defaults(map_reader& top, std::filesystem::path const& base, problem_list& problems) {
    auto node = top.mapping("defaults");
    if (!node)
        return {};
    map_reader defaults(*node, "defaults", problems);
    defaults_section out;
    out.own = read_partial_settings(defaults, base);
    out.resolved = apply(out.own, {});
    defaults.finish();
    return out;
}

} // namespace

daemon_config read_daemon_config(YAML::Node const& root, std::filesystem::path const& base, problem_list& problems) {
    daemon_config cfg;
    map_reader top(root, "", problems);
    if (auto found = top.scalar("listen", "host:port such as 127.0.0.1:9464 (quote an IPv6 one: \"[::1]:9464\")")) {
        if (auto address = parse_listen_address(found->first))
            cfg.listen = *address;
        else
            problems.add(found->second, "listen " + quote(found->first) +
                                            " is not host:port with a port from 0 to 65535 (such as 127.0.0.1:9464, "
                                            "or \"[::1]:9464\" for IPv6)");
    }
    cfg.web_config_file = read_path(top, "web_config_file", base);
    cfg.state_dir = read_path(top, "state_dir", base).value_or(cfg.state_dir);
    cfg.log = read_log(top, problems);
    cfg.max_transfers = static_cast<std::uint32_t>(top.count("max_transfers", 65536).value_or(cfg.max_transfers));
    cfg.max_passes = static_cast<std::uint32_t>(top.count("max_passes", 1024).value_or(cfg.max_passes));
    cfg.shutdown_timeout = top.duration("shutdown_timeout", milliseconds(0)).value_or(cfg.shutdown_timeout);
    auto const memory_limit = top.size("memory_limit", 64 * mebibyte, std::uint64_t{1} << 50);
    cfg.memory_limit = memory_limit.value_or(cfg.memory_limit);
    cfg.threads = static_cast<std::uint32_t>(top.count("threads", 256).value_or(cfg.threads));
    cfg.catalogs = read_catalogs(top, base, problems);
    share_memory(cfg, top, memory_limit.has_value());
    cfg.coordination = read_coordination(top, base, problems);
    cfg.attestation = read_attestation(top, base, problems);
    cfg.events = read_events(top, base, problems);
    auto const defaults = read_defaults(top, base, problems);
    cfg.defaults = defaults.resolved;
    cfg.stores = read_stores(top, base);
    cfg.repositories = read_repositories(top, defaults, cfg.stores, base);
    for (auto const& repo : cfg.repositories)
        if (repo.events.any() && !cfg.events && !top.find("events"))
            problems.add(top.mark(), "repository " + quote(repo.name) +
                                         ": events: needs the top-level events section (its listener and secrets_file)");
    top.finish();
    return cfg;
}

} // namespace mirror::config::detail
