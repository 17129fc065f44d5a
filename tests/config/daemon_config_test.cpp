#include "config/daemon_config.hpp"
#include <doctest/doctest.h>

#include "tests/support/temp_dir.hpp"

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <string>

using namespace mirror::config;
using namespace std::chrono_literals;

namespace {

/// The configuration, or a failed check listing every problem.
daemon_config parsed(std::string_view text, std::string_view file = "/etc/fdl-mirror/mirror.yaml") {
    auto result = parse_config(text, file);
    if (!result.has_value())
        for (auto const& problem : result.error())
            FAIL_CHECK(problem.text());
    REQUIRE(result.has_value());
    return *result;
}

} // namespace

TEST_CASE("daemon config: the issue's example reads with exactly its values") {
    auto const cfg = parsed(R"(
listen: 127.0.0.1:9464          # metrics and health; host:port, [v6]:port
state_dir: /var/lib/fdl-mirror
log: { format: plain, level: info }        # format plain|json; level debug|info|notice|warning|error
defaults: { interval: 5m, jitter: 10%, concurrency: 16, signatures: required, namespace: fdl }
repositories:
  - name: population
    origin: https://data.example.org/lake/population/
    mirror: s3://internal-mirror/population/
    allowed_signers: /etc/fdl-mirror/keys/population.allowed_signers
    signatures: required         # required | if-present | off   (use config::parse_signature_policy)
    interval: 1m
    allow_rewind: false
stores:                          # per endpoint: how to reach an S3 or HTTP store
  - match: s3://internal-mirror/
    endpoint: https://s3.internal.example:9000
    region: us-east-1
    addressing: path             # path | virtual | auto
    credentials_file: /run/credentials/fdl-mirror.service/s3
    ca_bundle: /etc/ssl/internal-ca.pem
    max_requests_per_second: 50
    max_bytes_per_second: 100MiB
)");
    CHECK(cfg.file == "/etc/fdl-mirror/mirror.yaml");
    CHECK(cfg.listen.host == "127.0.0.1");
    CHECK(cfg.listen.port == 9464);
    CHECK(cfg.state_dir == "/var/lib/fdl-mirror");
    CHECK(cfg.log.format == log_format::plain);
    CHECK(cfg.log.level == log_level::info);
    CHECK(cfg.defaults.interval == 5min);
    CHECK(cfg.defaults.jitter == doctest::Approx(0.10));
    CHECK(cfg.defaults.concurrency == 16);
    CHECK(cfg.defaults.signatures == signature_policy::required);
    CHECK(cfg.defaults.signature_namespace == "fdl");
    CHECK_FALSE(cfg.defaults.allowed_signers.has_value());

    REQUIRE(cfg.repositories.size() == 1);
    auto const& repo = cfg.repositories[0];
    CHECK(repo.name == "population");
    CHECK(repo.origin == "https://data.example.org/lake/population/");
    CHECK(repo.mirror == "s3://internal-mirror/population/");
    CHECK(repo.settings.allowed_signers == "/etc/fdl-mirror/keys/population.allowed_signers");
    CHECK(repo.settings.signatures == signature_policy::required);
    CHECK(repo.settings.interval == 1min);
    CHECK(repo.settings.allow_rewind == false);
    CHECK(repo.settings.jitter == doctest::Approx(0.10)); // from defaults
    CHECK(repo.settings.concurrency == 16);
    CHECK(repo.settings.signature_namespace == "fdl");
    CHECK(repo.settings.pass_timeout == 1h); // built in
    CHECK(repo.settings.backoff_max == 1h);

    REQUIRE(cfg.stores.size() == 1);
    auto const& store = cfg.stores[0];
    CHECK(store.match == "s3://internal-mirror/");
    CHECK(store.endpoint == "https://s3.internal.example:9000");
    CHECK(store.region == "us-east-1");
    CHECK(store.addressing == s3_addressing::path);
    CHECK(store.credentials_file == "/run/credentials/fdl-mirror.service/s3");
    CHECK(store.ca_bundle == "/etc/ssl/internal-ca.pem");
    CHECK(store.max_requests_per_second == std::uint64_t{50});
    CHECK(store.max_bytes_per_second == std::uint64_t{100} << 20);
    CHECK_FALSE(store.profile.has_value());
    CHECK(store.allow_plain_http == false);
    CHECK(store.part_size == 16 * mebibyte);
    CHECK(store.multipart_threshold == 16 * mebibyte);
    CHECK(match_store(cfg, repo.mirror) == &store);
    CHECK(match_store(cfg, repo.origin) == nullptr);
}

TEST_CASE("daemon config: a repository alone gets every built-in default") {
    auto const cfg = parsed(R"(
repositories:
  - name: a
    origin: /srv/origin
    mirror: /srv/mirror
    allowed_signers: /etc/keys
)");
    CHECK(to_string(cfg.listen) == "127.0.0.1:9464");
    CHECK(cfg.state_dir == "/var/lib/fdl-mirror");
    CHECK(cfg.log.format == log_format::plain);
    CHECK(cfg.log.level == log_level::info);
    CHECK(cfg.max_transfers == 64);
    CHECK(cfg.max_passes == 4);
    CHECK(cfg.shutdown_timeout == 30s);
    CHECK_FALSE(cfg.catalogs.scratch_dir.has_value());
    CHECK(cfg.catalogs.max_bytes == std::uint64_t{1} << 30);
    CHECK(cfg.catalogs.time_limit == 60s);
    CHECK(cfg.memory_limit == std::uint64_t{256} << 20);
    CHECK(cfg.threads == 0);
    CHECK(cfg.catalogs.readers == 1);
    CHECK(cfg.catalogs.memory_limit == std::uint64_t{64} << 20); // a quarter of memory_limit
    CHECK(transfer_memory(cfg) == std::uint64_t{192} << 20);
    // The unit's MemoryMax=1312M: 256 MiB, 32 MiB of program, 1 GiB for the one reader.
    CHECK(service_memory(cfg) == std::uint64_t{1312} << 20);
    CHECK(blocking_threads(cfg) >= 2);
    CHECK(blocking_threads(cfg) <= 8);
    CHECK(cfg.stores.empty());
    REQUIRE(cfg.repositories.size() == 1);
    auto const& s = cfg.repositories[0].settings;
    CHECK(s.interval == 5min);
    CHECK(s.jitter == doctest::Approx(0.10));
    CHECK(s.concurrency == 16);
    CHECK(s.signatures == signature_policy::required);
    CHECK(s.signature_namespace == "fdl");
    CHECK(s.allow_rewind == false);
    CHECK(s.pass_timeout == 1h);
    CHECK(s.backoff_max == 1h);
    CHECK(s.max_refs == 10'000);
    CHECK(s.max_ref_name_length == 255);
    CHECK(s.recheck_interval == 1h);
    CHECK(s.scrub_interval == 1h);
    CHECK(s.scrub_period == std::chrono::hours(24 * 30));
}

TEST_CASE("daemon config: every top-level and catalog key is read") {
    auto const cfg = parsed(R"(
listen: "[::1]:9100"
state_dir: /srv/state
log: { format: json, level: debug }
max_transfers: 8
max_passes: 2
memory_limit: 4GiB
threads: 3
shutdown_timeout: 1m30s
catalogs: { scratch_dir: /srv/scratch, max_bytes: 2GiB, time_limit: 5m, memory_limit: 1GiB, readers: 2 }
repositories:
  - { name: a, origin: /srv/o, mirror: /srv/m, signatures: off }
)");
    CHECK(cfg.listen.host == "::1");
    CHECK(cfg.listen.port == 9100);
    CHECK(cfg.state_dir == "/srv/state");
    CHECK(cfg.log.format == log_format::json);
    CHECK(cfg.log.level == log_level::debug);
    CHECK(cfg.max_transfers == 8);
    CHECK(cfg.max_passes == 2);
    CHECK(cfg.shutdown_timeout == 90s);
    CHECK(cfg.catalogs.scratch_dir == "/srv/scratch");
    CHECK(cfg.catalogs.max_bytes == std::uint64_t{2} << 30);
    CHECK(cfg.catalogs.time_limit == 5min);
    CHECK(cfg.catalogs.memory_limit == std::uint64_t{1} << 30);
    CHECK(cfg.catalogs.readers == 2);
    CHECK(cfg.memory_limit == std::uint64_t{4} << 30);
    CHECK(transfer_memory(cfg) == std::uint64_t{2} << 30); // 4 GiB less two readers' 1 GiB
    CHECK(service_memory(cfg) == (std::uint64_t{2} << 30) + (std::uint64_t{32} << 20) + 2 * (std::uint64_t{2} << 30));
    CHECK(cfg.threads == 3);
    CHECK(blocking_threads(cfg) == 3);
    CHECK(cfg.repositories.at(0).settings.signatures == signature_policy::off);
    CHECK_FALSE(cfg.repositories.at(0).settings.allowed_signers.has_value());
}

TEST_CASE("daemon config: a file that sets only DuckDB's limit gets a memory_limit twice it") {
    // Written before memory_limit existed: it still loads, with room for transfers.
    auto const cfg = parsed(R"(
catalogs: { memory_limit: 512MiB }
repositories:
  - { name: a, origin: /srv/o, mirror: /srv/m, signatures: off }
)");
    CHECK(cfg.catalogs.memory_limit == std::uint64_t{512} << 20);
    CHECK(cfg.memory_limit == std::uint64_t{1} << 30);
    CHECK(transfer_memory(cfg) == std::uint64_t{512} << 20);
}

TEST_CASE("daemon config: coordination is read, and defaults to auto with a 60 s lease") {
    auto const plain = parsed(R"(
repositories:
  - { name: a, origin: /srv/o, mirror: /srv/m, signatures: off }
)");
    CHECK(plain.coordination.mode == coordination_mode::automatic);
    CHECK(plain.coordination.instance.empty());
    CHECK_FALSE(plain.coordination.members.has_value());
    CHECK(plain.coordination.lease_duration == 60s);
    CHECK(plain.coordination.max_clock_skew == 5s);
    CHECK(plain.coordination.heartbeat_interval == 10s);

    auto const cfg = parsed(R"(
coordination:
  mode: leases
  instance: host-a.example_1
  members: s3://bucket/fdl-mirror/members/
  lease_duration: 2m
  max_clock_skew: 30s
  heartbeat_interval: 20s
repositories:
  - { name: a, origin: /srv/o, mirror: s3://bucket/a/, signatures: off }
)");
    CHECK(cfg.coordination.mode == coordination_mode::leases);
    CHECK(cfg.coordination.instance == "host-a.example_1");
    CHECK(cfg.coordination.members == "s3://bucket/fdl-mirror/members/");
    CHECK(cfg.coordination.lease_duration == 2min);
    CHECK(cfg.coordination.max_clock_skew == 30s);
    CHECK(cfg.coordination.heartbeat_interval == 20s);
    CHECK(to_string(coordination_mode::off) == "off");
    CHECK(to_string(coordination_mode::automatic) == "auto");
}

TEST_CASE("daemon config: a repository inherits each unset key from defaults, which inherit the built-ins") {
    auto const cfg = parsed(R"(
defaults:
  interval: 10m
  jitter: 25%
  concurrency: 4
  signatures: if-present
  namespace: example.org
  allowed_signers: /etc/keys/all
  allow_rewind: true
  pass_timeout: 2h
  max_refs: 500
repositories:
  - name: inherits
    origin: /srv/o1
    mirror: /srv/m1
  - name: overrides
    origin: /srv/o2
    mirror: /srv/m2
    interval: 30s
    jitter: 0%
    concurrency: 1024
    signatures: required
    namespace: fdl
    allowed_signers: /etc/keys/own
    allow_rewind: false
    pass_timeout: 15m
    backoff_max: 10m
    max_refs: 1000000
    max_ref_name_length: 1024
    recheck_interval: 0s
    scrub_interval: 10m
    scrub_period: 7d
)");
    REQUIRE(cfg.repositories.size() == 2);
    auto const& inherits = cfg.repositories[0].settings;
    CHECK(inherits.interval == 10min);
    CHECK(inherits.jitter == doctest::Approx(0.25));
    CHECK(inherits.concurrency == 4);
    CHECK(inherits.signatures == signature_policy::if_present);
    CHECK(inherits.signature_namespace == "example.org");
    CHECK(inherits.allowed_signers == "/etc/keys/all");
    CHECK(inherits.allow_rewind == true);
    CHECK(inherits.pass_timeout == 2h);
    CHECK(inherits.backoff_max == 1h); // neither sets it: built in
    CHECK(inherits.max_refs == 500);
    CHECK(inherits.max_ref_name_length == 255);
    auto const& overrides = cfg.repositories[1].settings;
    CHECK(overrides.interval == 30s);
    CHECK(overrides.jitter == 0.0);
    CHECK(overrides.concurrency == 1024);
    CHECK(overrides.signatures == signature_policy::required);
    CHECK(overrides.signature_namespace == "fdl");
    CHECK(overrides.allowed_signers == "/etc/keys/own");
    CHECK(overrides.allow_rewind == false);
    CHECK(overrides.pass_timeout == 15min);
    CHECK(overrides.backoff_max == 10min);
    CHECK(overrides.max_refs == 1'000'000);
    CHECK(overrides.max_ref_name_length == 1024);
    CHECK(overrides.recheck_interval == 0s);
    CHECK(overrides.scrub_interval == 10min);
    CHECK(overrides.scrub_period == std::chrono::hours(24 * 7));
    CHECK(inherits.recheck_interval == 1h);
    CHECK(cfg.defaults.interval == 10min);
    CHECK(cfg.defaults.backoff_max == 1h);
}

TEST_CASE("daemon config: relative paths resolve against the configuration file's folder") {
    auto const cfg = parsed(R"(
state_dir: state
catalogs: { scratch_dir: ./scratch/ }
defaults: { allowed_signers: keys/all.allowed_signers }
repositories:
  - name: relative
    origin: ../data/origin
    mirror: mirrors/relative
  - name: absolute
    origin: /srv/origin
    mirror: file:///srv/mirror
    allowed_signers: /etc/keys/own
  - name: urls
    origin: s3://bucket/origin/
    mirror: s3://bucket/mirror/
stores:
  - match: s3://bucket/
    credentials_file: ../../run/credentials/s3
    ca_bundle: ca.pem
)",
                            "/etc/fdl-mirror/mirror.yaml");
    CHECK(cfg.state_dir == "/etc/fdl-mirror/state");
    CHECK(cfg.catalogs.scratch_dir == "/etc/fdl-mirror/scratch/");
    CHECK(cfg.defaults.allowed_signers == "/etc/fdl-mirror/keys/all.allowed_signers");
    REQUIRE(cfg.repositories.size() == 3);
    CHECK(cfg.repositories[0].origin == "/etc/data/origin");
    CHECK(cfg.repositories[0].mirror == "/etc/fdl-mirror/mirrors/relative");
    CHECK(cfg.repositories[0].settings.allowed_signers == "/etc/fdl-mirror/keys/all.allowed_signers");
    CHECK(cfg.repositories[1].origin == "/srv/origin");
    CHECK(cfg.repositories[1].mirror == "file:///srv/mirror");
    CHECK(cfg.repositories[1].settings.allowed_signers == "/etc/keys/own");
    CHECK(cfg.repositories[2].origin == "s3://bucket/origin/");
    CHECK(cfg.stores.at(0).credentials_file == "/run/credentials/s3");
    CHECK(cfg.stores.at(0).ca_bundle == "/etc/fdl-mirror/ca.pem");
}

TEST_CASE("daemon config: a store is picked by the longest matching prefix, on '/' boundaries") {
    auto const cfg = parsed(R"(
repositories:
  - { name: a, origin: /srv/o, mirror: /srv/m, signatures: off }
stores:
  - match: s3://bucket/
    region: r1
  - match: s3://bucket/deep/er/
    region: r3
  - match: s3://bucket/deep/
    region: r2
  - match: s3://other/pre
    region: r4
  - match: https://data.example.org/
  - match: https://data.example.org/lake/
    allow_plain_http: false
)");
    auto region_for = [&](std::string_view location) -> std::string {
        auto const* store = match_store(cfg, location);
        return store == nullptr ? "none" : store->region.value_or(store->match);
    };
    CHECK(region_for("s3://bucket/x/") == "r1");
    CHECK(region_for("s3://bucket/") == "r1");
    CHECK(region_for("s3://bucket/deep/") == "r2");
    CHECK(region_for("s3://bucket/deep/x/") == "r2");
    CHECK(region_for("s3://bucket/deep/er/") == "r3");
    CHECK(region_for("s3://bucket/deep/er/x") == "r3");
    CHECK(region_for("s3://bucket/deeper/") == "r1");
    CHECK(region_for("s3://other/pre") == "r4");
    CHECK(region_for("s3://other/pre/x/") == "r4");
    CHECK(region_for("s3://other/prefix/") == "none");
    CHECK(region_for("s3://bucket2/") == "none");
    CHECK(region_for("s3://bucke") == "none");
    CHECK(region_for("https://data.example.org/lake/population/") == "https://data.example.org/lake/");
    CHECK(region_for("https://data.example.org/other/") == "https://data.example.org/");
    CHECK(region_for("http://data.example.org/lake/") == "none");
    CHECK(region_for("/srv/m") == "none");
}

TEST_CASE("daemon config: stores entries read every key") {
    auto const cfg = parsed(R"(
repositories:
  - { name: a, origin: "http://origin.test:8080/lake/", mirror: "s3://m/a/", signatures: off }
stores:
  - match: s3://m/
    endpoint: http://127.0.0.1:9000/
    allow_plain_http: true
    profile: mirror writer
    addressing: virtual
    part_size: 5MiB
    multipart_threshold: 1GiB
  - match: http://origin.test:8080/
    allow_plain_http: true
    ca_bundle: /etc/ssl/ca.pem
    max_requests_per_second: 1000000
    max_bytes_per_second: 1
    redirect_hosts: [cdn.example.org, "objects.example.net:8443"]
)");
    REQUIRE(cfg.stores.size() == 2);
    CHECK(cfg.stores[0].redirect_hosts.empty());
    CHECK(cfg.stores[1].redirect_hosts == std::vector<std::string>{"cdn.example.org", "objects.example.net:8443"});
    CHECK(cfg.stores[0].endpoint == "http://127.0.0.1:9000/");
    CHECK(cfg.stores[0].allow_plain_http);
    CHECK(cfg.stores[0].profile == "mirror writer");
    CHECK(cfg.stores[0].addressing == s3_addressing::virtual_hosted);
    CHECK(to_string(*cfg.stores[0].addressing) == "virtual");
    CHECK(cfg.stores[0].part_size == 5 * mebibyte);
    CHECK(cfg.stores[0].multipart_threshold == std::uint64_t{1} << 30);
    CHECK_FALSE(cfg.stores[0].max_bytes_per_second.has_value());
    CHECK(cfg.stores[1].max_requests_per_second == std::uint64_t{1000000});
    CHECK(cfg.stores[1].max_bytes_per_second == std::uint64_t{1});
    CHECK(match_store(cfg, cfg.repositories[0].origin) == &cfg.stores[1]);
}

TEST_CASE("daemon config: anchors and aliases work, an empty section is as good as none") {
    auto const cfg = parsed(R"(
log:
stores:
repositories:
  - name: a
    origin: /srv/a
    mirror: /srv/mirror-a
    interval: &often 1m
    allowed_signers: &keys /etc/keys
  - name: b
    origin: /srv/b
    mirror: /srv/mirror-b
    interval: *often
    allowed_signers: *keys
)");
    REQUIRE(cfg.repositories.size() == 2);
    CHECK(cfg.repositories[1].settings.interval == 1min);
    CHECK(cfg.repositories[1].settings.allowed_signers == "/etc/keys");
    CHECK(cfg.stores.empty());
}

TEST_CASE("daemon config: load_config reads a file and resolves paths against its folder") {
    mirror::test::temp_dir dir;
    std::filesystem::create_directories(dir / "etc");
    auto const file = dir / "etc/mirror.yaml";
    std::ofstream(file) << "repositories:\n  - { name: a, origin: ../o, mirror: m, allowed_signers: keys }\n";
    auto result = load_config(file);
    REQUIRE(result.has_value());
    CHECK(result->file == file);
    CHECK(result->repositories.at(0).origin == (dir.path() / "o").string());
    CHECK(result->repositories.at(0).mirror == (dir / "etc/m").string());
    CHECK(result->repositories.at(0).settings.allowed_signers == dir / "etc/keys");
}

TEST_CASE("daemon config: load_config reports a file it cannot read as one whole-file problem") {
    mirror::test::temp_dir dir;
    auto missing = load_config(dir / "absent.yaml");
    REQUIRE_FALSE(missing.has_value());
    REQUIRE(missing.error().size() == 1);
    CHECK(missing.error()[0].line == 0);
    CHECK(missing.error()[0].text() == (dir / "absent.yaml").string() + ": cannot read: no such file");

    auto folder = load_config(dir.path());
    REQUIRE_FALSE(folder.has_value());
    CHECK(folder.error().at(0).text() == dir.path().string() + ": cannot read: not a regular file");

    std::ofstream(dir / "big.yaml") << std::string(4 * 1024 * 1024 + 1, '#');
    auto big = load_config(dir / "big.yaml");
    REQUIRE_FALSE(big.has_value());
    CHECK(big.error().at(0).message == "cannot read: larger than 4MiB, too large for a configuration");

    std::ofstream(dir / "bad.yaml") << "repositories:\n  - name: a\n    intervall: 1m\n";
    auto bad = load_config(dir / "bad.yaml");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().at(0).file == (dir / "bad.yaml").string());
}

TEST_CASE("daemon config: value() on a failed result throws every problem's text") {
    auto result = parse_config("repositories: []\nlsten: x\n", "m.yaml");
    REQUIRE_FALSE(result.has_value());
    try {
        (void)result.value();
        FAIL("value() did not throw");
    } catch (std::runtime_error const& e) {
        CHECK(std::string(e.what()) == "m.yaml:1:1: repositories is empty: list at least one repository\n"
                                       "m.yaml:2:1: unknown top-level key 'lsten' (did you mean 'listen'?)");
    }
}

TEST_CASE("daemon config: the words to_string writes") {
    CHECK(to_string(log_format::json) == "json");
    CHECK(to_string(log_level::warning) == "warning");
    CHECK(to_string(s3_addressing::automatic) == "auto");
}

TEST_CASE("daemon config: a partial mirror's patterns, head and depth, peers, and the attestation section are read") {
    auto const cfg = parsed(R"(
attestation: { key_file: keys/mirror, interval: 10m, validity: 1h }
repositories:
  - name: a
    origin: /srv/o
    mirror: /srv/m
    signatures: off
    refs: { include: [ "refs/tags/v*", "refs/heads/main" ], exclude: [ "refs/tags/*-rc*" ] }
    head: refs/heads/main
    depth: 3
    peers: [ /srv/eu, "s3://bucket/us/" ]
    compare_interval: 5m
    peer_max_lag: 2
)");
    auto const& r = cfg.repositories.at(0);
    CHECK(r.include_refs == std::vector<std::string>{"refs/tags/v*", "refs/heads/main"});
    CHECK(r.exclude_refs == std::vector<std::string>{"refs/tags/*-rc*"});
    CHECK(r.head == "refs/heads/main");
    CHECK(r.depth == 3u);
    CHECK(r.peers == std::vector<std::string>{"/srv/eu", "s3://bucket/us/"});
    CHECK(r.settings.compare_interval == 5min);
    CHECK(r.settings.peer_max_lag == 2);
    REQUIRE(cfg.attestation.has_value());
    CHECK(cfg.attestation->key_file == "/etc/fdl-mirror/keys/mirror");
    CHECK(cfg.attestation->interval == 10min);
    CHECK(cfg.attestation->validity == 1h);
    CHECK(cfg.attestation->ns == "fdl-mirror-attestation");

    auto const plain = parsed(R"(
repositories:
  - { name: a, origin: /srv/o, mirror: /srv/m, signatures: off }
)");
    CHECK(plain.repositories.at(0).include_refs.empty());
    CHECK_FALSE(plain.repositories.at(0).head.has_value());
    CHECK_FALSE(plain.repositories.at(0).depth.has_value());
    for (auto depth : {"0", "-1", "many"}) {
        auto refused = parse_config(std::string("repositories:\n  - { name: a, origin: /srv/o, mirror: /srv/m, depth: ") +
                                    depth + " }\n", "m.yaml");
        CHECK_MESSAGE(!refused.has_value(), "depth: " << depth);
    }
    CHECK_FALSE(plain.attestation.has_value());

    // An attestation whose validity is not twice its interval, or without a key, is refused.
    for (auto text : {"attestation: { key_file: k, interval: 1h, validity: 1h }\n", "attestation: { interval: 1h }\n"}) {
        auto refused = parse_config(std::string(text) + "repositories:\n  - { name: a, origin: /srv/o, mirror: /srv/m, "
                                                        "signatures: off }\n",
                                    "/etc/fdl-mirror/mirror.yaml");
        REQUIRE_FALSE(refused.has_value());
        CHECK(refused.error().front().text().find("attestation") != std::string::npos);
    }
}
