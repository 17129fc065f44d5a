#include "daemon/service/pass_setup.hpp"

#include "core/io/errors.hpp"
#include "verify/allowed_signers.hpp"

#include <cstdlib>
#include <fstream>
#include <iterator>

namespace mirror::daemon {

namespace {

store::rate_limits limits_of(config::store_entry const& entry) {
    store::rate_limits limits;
    if (entry.max_requests_per_second)
        limits.requests_per_second = static_cast<double>(*entry.max_requests_per_second);
    limits.bytes_per_second = entry.max_bytes_per_second;
    return limits;
}

bool same_limits(store::rate_limits const& a, store::rate_limits const& b) {
    return a.requests_per_second == b.requests_per_second && a.bytes_per_second == b.bytes_per_second;
}

verify::signature_policy policy_of(config::signature_policy policy) {
    switch (policy) {
    case config::signature_policy::required: return verify::signature_policy::required;
    case config::signature_policy::if_present: return verify::signature_policy::if_present;
    case config::signature_policy::off: break;
    }
    return verify::signature_policy::off;
}

bool same_entry(config::store_entry const* a, config::store_entry const* b) {
    if (a == nullptr || b == nullptr)
        return a == b;
    return a->match == b->match && a->endpoint == b->endpoint && a->region == b->region &&
           a->profile == b->profile && a->addressing == b->addressing && a->credentials_file == b->credentials_file &&
           a->ca_bundle == b->ca_bundle && a->allow_plain_http == b->allow_plain_http &&
           a->max_requests_per_second == b->max_requests_per_second &&
           a->max_bytes_per_second == b->max_bytes_per_second && a->part_size == b->part_size &&
           a->multipart_threshold == b->multipart_threshold && a->redirect_hosts == b->redirect_hosts;
}

} // namespace

std::shared_ptr<store::throttle> throttle_registry::for_entry(config::store_entry const& entry) {
    auto limits = limits_of(entry);
    if (!limits.any()) {
        by_match_.erase(entry.match);
        return nullptr;
    }
    auto& held = by_match_[entry.match];
    if (!held || !same_limits(held->limits(), limits))
        held = std::make_shared<store::throttle>(limits);
    return held;
}

void throttle_registry::keep_only(config::daemon_config const& cfg) {
    std::erase_if(by_match_, [&](auto const& item) {
        for (auto const& entry : cfg.stores)
            if (entry.match == item.first)
                return false;
        return true;
    });
}

store::store_options store_options_for(config::daemon_config const& cfg, std::string_view location,
                                       throttle_registry& throttles) {
    store::store_options out;
    auto const* entry = config::match_store(cfg, location);
    if (entry == nullptr)
        return out;
    out.allow_plain_http = entry->allow_plain_http;
    out.ca_bundle = entry->ca_bundle;
    out.s3.endpoint = entry->endpoint;
    out.s3.region = entry->region;
    out.s3.profile = entry->profile;
    if (entry->addressing)
        out.s3.addressing = std::string(config::to_string(*entry->addressing));
    out.s3.credentials_file = entry->credentials_file;
    out.s3.ca_bundle = entry->ca_bundle;
    out.part_bytes = entry->part_size;
    out.multipart_threshold = entry->multipart_threshold;
    out.redirect_hosts = entry->redirect_hosts;
    out.limits = throttles.for_entry(*entry);
    return out;
}

bool same_store_settings(config::daemon_config const& a, config::daemon_config const& b, std::string_view location) {
    return same_entry(config::match_store(a, location), config::match_store(b, location));
}

result<verify::trust_settings> load_trust(config::repository_config const& repo) {
    verify::trust_settings trust;
    trust.policy = policy_of(repo.settings.signatures);
    trust.ns = repo.settings.signature_namespace;
    auto const& file = repo.settings.allowed_signers;
    if (!file) // the configuration allows this with `signatures: off` only
        return trust;
    std::ifstream in(*file, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.is_open() || in.bad())
        return make_error(io::store_errc::io_error,
                          "repository '" + repo.name + "': allowed_signers: " + file->string() + ": cannot be read");
    auto signers = verify::parse_allowed_signers(text, file->string());
    if (!signers)
        return error{signers.error().code, "repository '" + repo.name + "': allowed_signers: " +
                                               signers.error().message};
    trust.signers = std::move(*signers);
    return trust;
}

std::string duckdb_memory_limit(std::uint64_t bytes) {
    // DuckDB's "KB" is 1000 bytes; rounding down keeps the limit a limit.
    return std::to_string(std::max<std::uint64_t>(bytes / 1000, 1)) + "KB";
}

memory_split split_memory_limit(std::uint64_t limit) {
    std::uint64_t const duckdb = config::default_duckdb_limit(limit, 1);
    return {duckdb, config::transfer_memory(limit, duckdb)};
}

sync::catalog_settings catalog_settings_of(config::daemon_config const& cfg) {
    sync::catalog_settings out;
    if (cfg.catalogs.scratch_dir)
        out.scratch_parent = *cfg.catalogs.scratch_dir;
    out.max_bytes = cfg.catalogs.max_bytes;
    out.time_limit = cfg.catalogs.time_limit;
    out.memory_limit = duckdb_memory_limit(cfg.catalogs.memory_limit);
    return out;
}

} // namespace mirror::daemon
