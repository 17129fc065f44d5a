#include "daemon/service/pass_setup.hpp"

#include "core/io/errors.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

#include <fstream>

using namespace mirror;

namespace {

config::daemon_config parsed(std::string const& text) {
    auto result = config::parse_config(text, "/etc/fdl-mirror/config.yaml");
    if (!result) {
        for (auto const& problem : result.error())
            MESSAGE(problem.text());
        FAIL("the test's configuration does not parse");
    }
    return *result;
}

std::string const two_stores = R"(
defaults: { signatures: off }
repositories:
  - { name: a, origin: "https://data.example.org/lake/a/", mirror: "s3://internal/a/" }
  - { name: b, origin: "https://data.example.org/lake/b/", mirror: "s3://internal/b/" }
  - { name: c, origin: /srv/c, mirror: /srv/mirror-c }
stores:
  - match: s3://internal/
    endpoint: https://s3.internal.example:9000
    region: eu-central-1
    addressing: path
    credentials_file: /run/credentials/fdl-mirror.service/s3
    part_size: 8MiB
    multipart_threshold: 32MiB
  - match: https://data.example.org/
    ca_bundle: /etc/ssl/example.pem
    max_requests_per_second: 20
    max_bytes_per_second: 10MiB
)";

} // namespace

TEST_CASE("a location takes the settings of the stores entry that matches it") {
    auto cfg = parsed(two_stores);
    daemon::throttle_registry throttles;
    auto mirror = daemon::store_options_for(cfg, "s3://internal/a/", throttles);
    CHECK(mirror.s3.endpoint == "https://s3.internal.example:9000");
    CHECK(mirror.s3.region == "eu-central-1");
    CHECK(mirror.s3.addressing == "path");
    CHECK(mirror.s3.credentials_file == "/run/credentials/fdl-mirror.service/s3");
    CHECK(mirror.part_bytes == 8u * 1024 * 1024);
    CHECK(mirror.multipart_threshold == 32u * 1024 * 1024);
    CHECK(!mirror.limits); // no rate set: unlimited
    CHECK(!mirror.allow_plain_http);

    auto origin = daemon::store_options_for(cfg, "https://data.example.org/lake/a/", throttles);
    CHECK(origin.ca_bundle == "/etc/ssl/example.pem");
    REQUIRE(origin.limits);
    CHECK(origin.limits->limits().requests_per_second == 20.0);
    CHECK(origin.limits->limits().bytes_per_second == 10u * 1024 * 1024);

    auto folder = daemon::store_options_for(cfg, "/srv/c", throttles);
    CHECK(!folder.limits);
    CHECK(!folder.s3.endpoint);
    CHECK(!folder.ca_bundle);
}

TEST_CASE("repositories behind one stores entry share its rate limits, across reloads while they stay") {
    auto cfg = parsed(two_stores);
    daemon::throttle_registry throttles;
    auto a = daemon::store_options_for(cfg, "https://data.example.org/lake/a/", throttles);
    auto b = daemon::store_options_for(cfg, "https://data.example.org/lake/b/", throttles);
    CHECK(a.limits == b.limits); // the endpoint's limit, not one per repository

    auto reloaded = parsed(two_stores);
    throttles.keep_only(reloaded);
    CHECK(daemon::store_options_for(reloaded, "https://data.example.org/lake/a/", throttles).limits == a.limits);

    std::string slower = two_stores;
    slower.replace(slower.find("max_requests_per_second: 20"), 27, "max_requests_per_second: 5");
    auto changed = parsed(slower);
    throttles.keep_only(changed);
    auto after = daemon::store_options_for(changed, "https://data.example.org/lake/a/", throttles);
    REQUIRE(after.limits);
    CHECK(after.limits != a.limits);
    CHECK(after.limits->limits().requests_per_second == 5.0);
}

TEST_CASE("a reload keeps a store open only when its entry's settings are the same") {
    auto before = parsed(two_stores);
    CHECK(daemon::same_store_settings(before, parsed(two_stores), "s3://internal/a/"));
    std::string other_region = two_stores;
    other_region.replace(other_region.find("eu-central-1"), 12, "eu-west-1");
    auto after = parsed(other_region);
    CHECK(!daemon::same_store_settings(before, after, "s3://internal/a/"));
    CHECK(daemon::same_store_settings(before, after, "https://data.example.org/lake/a/"));
    CHECK(daemon::same_store_settings(before, after, "/srv/c")); // no entry either way
}

TEST_CASE("trusted keys are read from the repository's allowed_signers file, and a bad one is named") {
    test::temp_dir tmp;
    auto keys = tmp / "keys";
    {
        std::ofstream out(keys);
        out << "release@example.org ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n";
    }
    config::repository_config repo;
    repo.name = "population";
    repo.settings.signatures = config::signature_policy::required;
    repo.settings.signature_namespace = "fdl-test";
    repo.settings.allowed_signers = keys;
    auto trust = daemon::load_trust(repo);
    REQUIRE(trust.has_value());
    CHECK(trust->policy == verify::signature_policy::required);
    CHECK(trust->ns == "fdl-test");

    SUBCASE("a file that is gone") {
        repo.settings.allowed_signers = tmp / "gone";
        auto missing = daemon::load_trust(repo);
        REQUIRE(!missing.has_value());
        CHECK(missing.error().message.find("repository 'population'") != std::string::npos);
        CHECK(missing.error().message.find((tmp / "gone").string()) != std::string::npos);
    }
    SUBCASE("a line that does not parse is skipped and counted, as OpenSSH skips it") {
        std::ofstream(keys) << "release@example.org ssh-ed25519 not-base64!\n";
        auto broken = daemon::load_trust(repo);
        REQUIRE(broken.has_value());
        CHECK(broken->signers.entries.empty());
        REQUIRE(broken->signers.skipped.size() == 1);
        CHECK(broken->signers.skipped[0].message.starts_with(keys.string() + ":1: "));
    }
    SUBCASE("signatures off needs no file") {
        repo.settings.signatures = config::signature_policy::off;
        repo.settings.allowed_signers.reset();
        auto off = daemon::load_trust(repo);
        REQUIRE(off.has_value());
        CHECK(off->policy == verify::signature_policy::off);
    }
}

TEST_CASE("catalog limits reach the engine, DuckDB's memory limit in its own units") {
    CHECK(daemon::duckdb_memory_limit(512ull * 1024 * 1024) == "536870KB");
    CHECK(daemon::duckdb_memory_limit(10) == "1KB");
}

TEST_CASE("sync's memory limit gives DuckDB a quarter, at least 16 MiB, and the transfers the rest") {
    constexpr std::uint64_t mib = 1024 * 1024;
    auto split = daemon::split_memory_limit(64 * mib); // sync's default
    CHECK(split.duckdb == 16 * mib);
    CHECK(split.transfers == 48 * mib);
    split = daemon::split_memory_limit(1024 * mib);
    CHECK(split.duckdb == 256 * mib);
    CHECK(split.transfers == 768 * mib);
    split = daemon::split_memory_limit(16 * mib); // the least --memory-limit takes
    CHECK(split.duckdb == 16 * mib);
    CHECK(split.transfers == 8 * mib);
    auto cfg = parsed(two_stores + "catalogs: { max_bytes: 2GiB, time_limit: 90s, scratch_dir: /var/tmp }\n");
    auto catalogs = daemon::catalog_settings_of(cfg);
    CHECK(catalogs.max_bytes == 2ull * 1024 * 1024 * 1024);
    CHECK(catalogs.time_limit == std::chrono::seconds(90));
    CHECK(catalogs.scratch_parent == "/var/tmp");
}
