// Broken configurations: each problem's exact `file:line:col: message`.
#include "config/daemon_config.hpp"
#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

using namespace mirror::config;

namespace {

std::vector<std::string> problems_of(std::string_view text) {
    auto result = parse_config(text, "mirror.yaml");
    if (result.has_value())
        return {};
    std::vector<std::string> out;
    for (auto const& problem : result.error())
        out.push_back(problem.text());
    return out;
}

// A valid repository to build broken files around: lines 1 to 5.
constexpr std::string_view repo = R"(repositories:
  - name: a
    origin: /srv/origin
    mirror: /srv/mirror
    signatures: off
)";

std::string with(std::string_view extra) { return std::string(repo) + std::string(extra); }

struct broken {
    char const* what;
    std::string text;
    std::string expected; ///< the one problem's text
};

} // namespace

TEST_CASE("daemon config: the base of the broken files is valid") { CHECK(problems_of(repo).empty()); }

TEST_CASE("daemon config: each broken configuration gives its one exact problem") {
    broken const cases[] = {
        {"catalog readers taking more than half the memory", with("memory_limit: 128MiB\ncatalogs: { memory_limit: 48MiB, readers: 2 }\n"),
         "mirror.yaml:7:1: catalogs: readers x memory_limit (96 MiB) is more than half of memory_limit (128 MiB): raise "
         "memory_limit or lower catalogs.memory_limit"},
        {"a memory limit too small to work in", with("memory_limit: 8MiB\n"),
         "mirror.yaml:6:15: memory_limit '8MiB' is below 64MiB"},
        {"a typo in a repository's key", with("    intervall: 1m\n"),
         "mirror.yaml:6:5: unknown key 'intervall' in repository 'a' (did you mean 'interval'?)"},
        {"a typo in a top-level key", "lsten: 127.0.0.1:9464\n" + std::string(repo),
         "mirror.yaml:1:1: unknown top-level key 'lsten' (did you mean 'listen'?)"},
        {"an unknown key with no near known one", with("    colour: blue\n"),
         "mirror.yaml:6:5: unknown key 'colour' in repository 'a'"},
        {"a typo in a section", with("log: { format: json, levl: info }\n"),
         "mirror.yaml:6:22: unknown key 'levl' in log (did you mean 'level'?)"},
        {"a list where a duration belongs", with("    interval: [1m]\n"),
         "mirror.yaml:6:15: repository 'a': interval must be a duration such as 30s, 5m or 1h30m, not a list"},
        {"a bad duration", with("    interval: 5x\n"),
         "mirror.yaml:6:15: repository 'a': interval '5x' is not a duration such as 500ms, 30s, 5m, 1h or 1h30m"},
        {"a duration without a unit", with("    pass_timeout: 300\n"),
         "mirror.yaml:6:19: repository 'a': pass_timeout '300' is not a duration such as 30s, 5m or 1h30m: give a "
         "unit"},
        {"a zero interval", with("defaults: { interval: 0s }\n"),
         "mirror.yaml:6:23: defaults: interval '0s' is shorter than 1s"},
        {"a negative duration", with("shutdown_timeout: -1s\n"),
         "mirror.yaml:6:19: shutdown_timeout '-1s' is not a duration such as 500ms, 30s, 5m, 1h or 1h30m"},
        {"a bad size", with("stores:\n  - match: s3://b/\n    max_bytes_per_second: 100 MiB\n"),
         "mirror.yaml:8:27: store 's3://b/': max_bytes_per_second '100 MiB' is not a size such as 4096, 512KiB, "
         "64MiB, 1GiB or 100MB"},
        {"a part size below S3's minimum", with("stores:\n  - match: s3://b/\n    part_size: 1MiB\n"),
         "mirror.yaml:8:16: store 's3://b/': part_size '1MiB' is below 5MiB"},
        {"a catalog size past 64 bits", with("catalogs:\n  max_bytes: 99999999999TiB\n"),
         "mirror.yaml:7:14: catalogs: max_bytes '99999999999TiB' is not a size such as 4096, 512KiB, 64MiB, 1GiB or "
         "100MB"},
        {"jitter past 100%", with("defaults:\n  jitter: 150%\n"),
         "mirror.yaml:7:11: defaults: jitter '150%' is not a percentage from 0% to 100%"},
        {"concurrency zero", with("    concurrency: 0\n"),
         "mirror.yaml:6:18: repository 'a': concurrency '0' is not a whole number from 1 to 1024"},
        {"concurrency too high", with("    concurrency: 1025\n"),
         "mirror.yaml:6:18: repository 'a': concurrency '1025' is not a whole number from 1 to 1024"},
        {"max_refs zero", with("    max_refs: 0\n"),
         "mirror.yaml:6:15: repository 'a': max_refs '0' is not a whole number from 1 to 1000000"},
        {"max_ref_name_length too high", with("    max_ref_name_length: 4097\n"),
         "mirror.yaml:6:26: repository 'a': max_ref_name_length '4097' is not a whole number from 1 to 4096"},
        {"max_transfers zero", with("max_transfers: 0\n"),
         "mirror.yaml:6:16: max_transfers '0' is not a whole number from 1 to 65536"},
        {"a YAML 1.1 boolean", with("    allow_rewind: yes\n"),
         "mirror.yaml:6:19: repository 'a': allow_rewind 'yes' is not true or false"},
        {"an unknown log format", with("log: { format: xml }\n"),
         "mirror.yaml:6:16: log: format 'xml' is not one of plain, json"},
        {"a duplicate key in a repository", with("    namespace: fdl\n    signatures: sometimes\n"),
         // the first `signatures: off` is kept; the second is only reported
         "mirror.yaml:7:5: duplicate key 'signatures' in repository 'a' (first at line 5)"},
        {"an unknown signature policy (and so no complaint about allowed_signers)",
         "repositories:\n  - { name: a, origin: /o, mirror: /m, signatures: sometimes }\n",
         "mirror.yaml:2:52: repository 'a': signatures 'sometimes' is not one of required, if-present, off"},
        {"a section that is not a mapping", with("log: plain\n"),
         "mirror.yaml:6:6: log must be a mapping, not a string"},
        {"a key without a value", with("state_dir:\n"), "mirror.yaml:6:1: state_dir has no value"},
        {"a '~' path", with("    allowed_signers: ~/keys\n"),
         "mirror.yaml:6:22: repository 'a': allowed_signers '~/keys' starts with '~', which is not expanded: write the "
         "full path"},
        {"a bad listen address", "listen: localhost\n" + std::string(repo),
         "mirror.yaml:1:9: listen 'localhost' is not host:port with a port from 0 to 65535 (such as 127.0.0.1:9464, "
         "or \"[::1]:9464\" for IPv6)"},
        {"a listen port out of range", "listen: 127.0.0.1:65536\n" + std::string(repo),
         "mirror.yaml:1:9: listen '127.0.0.1:65536' is not host:port with a port from 0 to 65535 (such as "
         "127.0.0.1:9464, or \"[::1]:9464\" for IPv6)"},
        {"an unquoted IPv6 listen address", "listen: [::1]:9464\n" + std::string(repo),
         "mirror.yaml:1:14: invalid YAML: end of map not found"},
        {"a YAML syntax error", "repositories:\n  - name: a\n   origin: /srv/o\n",
         "mirror.yaml:3:4: invalid YAML: end of sequence not found"},
        {"a duplicate top-level key", "listen: 127.0.0.1:1\n" + std::string(repo) + "listen: 127.0.0.1:2\n",
         "mirror.yaml:7:1: duplicate key 'listen' at the top level (first at line 1)"},
        {"a duplicate repository name",
         with("  - name: a\n    origin: /srv/o2\n    mirror: /srv/m2\n    signatures: off\n"),
         "mirror.yaml:6:11: repository name 'a' is used twice (first at line 2)"},
        {"a name with a slash", "repositories:\n  - { name: a/b, origin: /o, mirror: /m, signatures: off }\n",
         "mirror.yaml:2:13: repository name 'a/b' must be 1 to 64 letters, digits, '.', '_' or '-', starting with a "
         "letter or digit"},
        {"a name starting with a dot", "repositories:\n  - { name: .a, origin: /o, mirror: /m, signatures: off }\n",
         "mirror.yaml:2:13: repository name '.a' must be 1 to 64 letters, digits, '.', '_' or '-', starting with a "
         "letter or digit"},
        {"a missing origin", "repositories:\n  - name: a\n    mirror: /srv/m\n    signatures: off\n",
         "mirror.yaml:2:5: repository 'a': missing key 'origin'"},
        {"a missing name", "repositories:\n  - origin: /srv/o\n    mirror: /srv/m\n    signatures: off\n",
         "mirror.yaml:2:5: repository #1: missing key 'name'"},
        {"an http mirror",
         "repositories:\n  - { name: a, origin: /o, mirror: \"https://example.org/m/\", signatures: off }\n",
         "mirror.yaml:2:36: repository 'a': mirror 'https://example.org/m/' is read-only (HTTP): a mirror is a folder "
         "path or a file:// or s3:// URL"},
        {"a password in an origin URL",
         "repositories:\n  - { name: a, origin: \"https://user:hunter2@h/o/\", mirror: /m, signatures: off }\n",
         "mirror.yaml:2:24: repository 'a': origin 'https://user:***@h/o/' holds user information: credentials never "
         "go in URLs (S3 keys go in a store's credentials_file or the environment)"},
        {"a token as the user of an s3 mirror URL",
         "repositories:\n  - { name: a, origin: /o, mirror: \"s3://hunter2@bucket/m/\", signatures: off }\n",
         "mirror.yaml:2:36: repository 'a': mirror 's3://***@bucket/m/' holds user information: credentials never go "
         "in URLs (S3 keys go in a store's credentials_file or the environment)"},
        {"user information in a store's endpoint",
         with("stores:\n  - match: s3://b/\n    endpoint: \"https://key:hunter2@s3.example.org\"\n"),
         "mirror.yaml:8:15: store 's3://b/': endpoint 'https://key:***@s3.example.org' holds user information: "
         "credentials never go in URLs (use credentials_file or the environment)"},
        {"user information in a store's match",
         with("stores:\n  - match: \"https://u:hunter2@h/\"\n"),
         "mirror.yaml:7:12: store 'https://u:***@h/': match 'https://u:***@h/' holds user information: "
         "credentials never go in URLs (S3 keys go in a store's credentials_file or the environment)"},
        {"a redirect host that is a URL",
         with("stores:\n  - match: https://h/\n    redirect_hosts: [\"https://cdn/\"]\n"),
         "mirror.yaml:8:22: store 'https://h/': redirect_hosts item 'https://cdn/' is not a host or host:port (such "
         "as cdn.example.org or cdn.example.org:8443)"},
        {"redirect hosts for an s3 store",
         with("stores:\n  - match: s3://b/\n    redirect_hosts: [cdn]\n"),
         "mirror.yaml:8:5: store 's3://b/': redirect_hosts applies only to http:// and https:// stores"},
        {"an unknown origin scheme",
         "repositories:\n  - { name: a, origin: \"ftp://h/o/\", mirror: /m, signatures: off }\n",
         "mirror.yaml:2:24: repository 'a': origin 'ftp://h/o/' has the scheme 'ftp': it must be a folder path or a "
         "file://, http://, https:// or s3:// URL"},
        {"a relative file:// URL",
         "repositories:\n  - { name: a, origin: /o, mirror: \"file://m\", signatures: off }\n",
         "mirror.yaml:2:36: repository 'a': mirror 'file://m' needs an absolute path (file:///…)"},
        {"an s3 location without a bucket",
         "repositories:\n  - { name: a, origin: \"s3:///o/\", mirror: /m, signatures: off }\n",
         "mirror.yaml:2:24: repository 'a': origin 's3:///o/' has no bucket (s3://bucket/prefix/)"},
        {"a mirror that is its origin",
         "repositories:\n  - { name: a, origin: /srv/x, mirror: \"file:///srv/x/\", "
         "signatures: off }\n",
         "mirror.yaml:2:40: repository 'a': mirror 'file:///srv/x/' is the same location as its origin"},
        {"two repositories with one mirror",
         with("  - { name: b, origin: /srv/o2, mirror: /srv/mirror/, signatures: off }\n"),
         "mirror.yaml:6:41: repository 'b': mirror '/srv/mirror/' is also the mirror of repository 'a' (line 4)"},
        {"a mirror inside another's",
         with("  - { name: b, origin: /srv/o2, mirror: /srv/mirror/b, signatures: off }\n"),
         "mirror.yaml:6:41: repository 'b': mirror '/srv/mirror/b' lies inside the mirror of repository 'a' (line 4)"},
        {"signatures required, explicitly, without allowed_signers",
         "repositories:\n  - name: a\n    origin: /o\n    mirror: /m\n    signatures: required\n",
         "mirror.yaml:5:5: repository 'a': signatures 'required' needs allowed_signers (or signatures: off)"},
        {"signatures required by default without allowed_signers",
         "repositories:\n  - name: a\n    origin: /o\n    mirror: /m\n",
         "mirror.yaml:2:5: repository 'a': signatures 'required' (the default) needs allowed_signers (or signatures: "
         "off)"},
        {"signatures if-present from defaults without allowed_signers",
         "defaults: { signatures: if-present }\nrepositories:\n  - { name: a, origin: /o, mirror: /m }\n",
         "mirror.yaml:3:5: repository 'a': signatures 'if-present' (from defaults) needs allowed_signers (or "
         "signatures: off)"},
        {"no repositories", "listen: 127.0.0.1:9464\n", "mirror.yaml:1:1: missing top-level key 'repositories'"},
        {"an empty repository list", "repositories: []\n",
         "mirror.yaml:1:1: repositories is empty: list at least one repository"},
        {"a repository that is not a mapping", "repositories:\n  - a\n",
         "mirror.yaml:2:5: repository #1 must be a mapping, not a string"},
        {"stores as a mapping", with("stores: { match: \"s3://b/\" }\n"),
         "mirror.yaml:6:9: stores must be a list, not a mapping"},
        {"a store without match", with("stores:\n  - region: eu-west-1\n"),
         "mirror.yaml:7:5: store #1: missing key 'match'"},
        {"a store match that is a folder", with("stores:\n  - match: /srv\n"),
         "mirror.yaml:7:12: store '/srv': match '/srv' is not an s3://, http:// or https:// URL prefix"},
        {"a store listed twice", with("stores:\n  - match: s3://b\n  - match: s3://b/\n"),
         "mirror.yaml:8:12: store 's3://b/' is listed twice (first at line 7)"},
        {"an S3 key on an HTTP store", with("stores:\n  - match: https://h/\n    region: eu-west-1\n"),
         "mirror.yaml:8:5: store 'https://h/': region applies only to s3:// stores"},
        {"a secret in the file", with("stores:\n  - match: s3://b/\n    secret_access_key: hunter2\n"),
         "mirror.yaml:8:5: store 's3://b/': secret_access_key is not read from the configuration: put secrets in the "
         "file credentials_file names"},
        {"a plain-http endpoint not allowed", with("stores:\n  - match: s3://b/\n    endpoint: http://minio:9000\n"),
         "mirror.yaml:8:15: store 's3://b/': endpoint 'http://minio:9000' is plain http: set allow_plain_http: true to "
         "send requests unencrypted"},
        {"an endpoint with a path", with("stores:\n  - match: s3://b/\n    endpoint: https://minio:9000/s3\n"),
         "mirror.yaml:8:15: store 's3://b/': endpoint 'https://minio:9000/s3' is not scheme://host[:port], with "
         "nothing after the port"},
        {"an unknown addressing", with("stores:\n  - match: s3://b/\n    addressing: dns\n"),
         "mirror.yaml:8:17: store 's3://b/': addressing 'dns' is not one of path, virtual, auto"},
        {"a plain-http origin without a store allowing it",
         "repositories:\n  - { name: a, origin: \"http://h/o/\", mirror: /m, signatures: off }\n",
         "mirror.yaml:2:24: repository 'a': origin 'http://h/o/' is plain http: add a stores entry matching it with "
         "allow_plain_http: true"},
        {"an unknown coordination mode", with("coordination: { mode: raft }\n"),
         "mirror.yaml:6:23: coordination: mode 'raft' is not one of auto, leases, off"},
        {"an instance name with a space", with("coordination: { instance: host a }\n"),
         "mirror.yaml:6:27: coordination: instance 'host a' is not a name of 1 to 64 letters, digits, '.', '_' or '-'"},
        {"a lease too short", with("coordination: { lease_duration: 5s }\n"),
         "mirror.yaml:6:33: coordination: lease_duration '5s' is shorter than 10s"},
        {"a clock skew past a quarter of the lease", with("coordination: { max_clock_skew: 20s }\n"),
         "mirror.yaml:6:15: coordination: max_clock_skew must be at most a quarter of lease_duration (15s)"},
        {"heartbeats further apart than half a lease", with("coordination: { heartbeat_interval: 40s }\n"),
         "mirror.yaml:6:15: coordination: heartbeat_interval must be at most half of lease_duration (30s)"},
        {"members on an HTTP server", with("coordination: { members: \"https://h/m/\" }\n"),
         "mirror.yaml:6:26: coordination: members 'https://h/m/' is read-only (HTTP): a mirror is a folder path or a "
         "file:// or s3:// URL"},
        {"a configuration that is a list", "- a\n- b\n",
         "mirror.yaml:1:1: the configuration must be a mapping of keys, not a list"},
        {"an empty file", "# nothing yet\n",
         "mirror.yaml: the configuration is empty: it needs at least 'repositories'"},
        {"two YAML documents", std::string(repo) + "---\nlisten: 127.0.0.1:1\n",
         "mirror.yaml:7:1: a second YAML document: the configuration is one document"},
        {"a key that is not a string", with("[a, b]: 1\n"),
         "mirror.yaml:6:1: a key must be a string, not a list at the top level"},
        {"a scrub step more often than every second", with("    scrub_interval: 500ms\n"),
         "mirror.yaml:6:21: repository 'a': scrub_interval '500ms' is shorter than 1s"},
        {"a scrub period that is no duration", with("    scrub_period: never\n"),
         "mirror.yaml:6:19: repository 'a': scrub_period 'never' is not a duration such as 500ms, 30s, 5m, 1h or 1h30m"},
        {"a control character in a value", with("    namespace: \"a\\tb\"\n    concurrency: \"x\\ty\"\n"),
         "mirror.yaml:7:18: repository 'a': concurrency 'x\\x09y' is not a whole number from 1 to 1024"},
    };
    for (auto const& c : cases) {
        CAPTURE(c.what);
        CAPTURE(c.text);
        auto const found = problems_of(c.text);
        REQUIRE(found.size() == 1);
        CHECK(found[0] == c.expected);
    }
}

// Found by tests/fuzz/config_fuzz.cpp: yaml-cpp 0.7's LoadAll never returned on these
// (its parser stops advancing and LoadAll collects empty documents until memory runs out),
// so check-config, the daemon's start and a reload ran out of memory on a stray comma.
TEST_CASE("daemon config: text where yaml-cpp stops advancing is refused, not read for ever") {
    CHECK(problems_of(",[#") == std::vector<std::string>{"mirror.yaml:1:1: invalid YAML: nothing can be read from here on"});
    CHECK(problems_of(",") == std::vector<std::string>{"mirror.yaml:1:1: invalid YAML: nothing can be read from here on"});
    // After a first document, where a second would start (LoadAll looped there too).
    CHECK(problems_of("{repositories: [{name: a, origin: /o, mirror: /m, signatures: off}]}\n,\n") ==
          std::vector<std::string>{"mirror.yaml:2:1: invalid YAML: nothing can be read from here on"});
    CHECK(problems_of(std::string(repo) + "---\n,\n") ==
          std::vector<std::string>{"mirror.yaml:7:1: invalid YAML: nothing can be read from here on"});
    // After a block mapping, a comma is an ordinary syntax error.
    CHECK(problems_of(with(",\n")) == std::vector<std::string>{"mirror.yaml:6:1: invalid YAML: end of map not found"});
    // A real second document is still one.
    CHECK(problems_of(std::string(repo) + "---\n---\n") ==
          std::vector<std::string>{"mirror.yaml:7:1: a second YAML document: the configuration is one document"});
}

// Found by tests/fuzz/config_fuzz.cpp: yaml-cpp's own message repeats the raw byte of a
// bad escape, and a control character there (a line break) split one problem into lines.
TEST_CASE("daemon config: every problem is one line, yaml-cpp's messages included") {
    auto const found = problems_of("listen: \"a\\\x01" "b\"\n"); // a backslash, then byte 1
    REQUIRE(found.size() == 1);
    CHECK(found[0] == "mirror.yaml:1:13: invalid YAML: unknown escape character: \\x01");
}

TEST_CASE("daemon config: a secret's value never appears in a message") {
    auto const found = problems_of(with("stores:\n  - match: s3://b/\n    secret_access_key: hunter2\n"
                                        "    aws_session_token: [hunter3]\n"));
    REQUIRE(found.size() == 2);
    for (auto const& text : found) {
        CHECK(text.find("hunter") == std::string::npos);
    }
}

TEST_CASE("daemon config: a password or token in a URL never appears in a message") {
    for (std::string text : {with("stores:\n  - match: \"https://u:hunter2@h/\"\n    region: x y\n"),
                             std::string("repositories:\n  - { name: a, origin: \"https://hunter2@h/\", mirror: \"s3://"
                                         "k:hunter2@b/\" }\n")}) {
        CAPTURE(text);
        auto const found = problems_of(text);
        REQUIRE(!found.empty());
        for (auto const& problem : found)
            CHECK(problem.find("hunter") == std::string::npos);
    }
}

TEST_CASE("daemon config: a long value is cut in messages") {
    auto const found = problems_of(with("    interval: " + std::string(200, '9') + "x\n"));
    REQUIRE(found.size() == 1);
    CHECK(found[0] == "mirror.yaml:6:15: repository 'a': interval '" + std::string(64, '9') +
                          "…' is not a duration such as 500ms, 30s, 5m, 1h or 1h30m");
}

TEST_CASE("daemon config: every problem of a file is reported at once, in the order of their places") {
    auto const found = problems_of(R"(listen: 127.0.0.1:-1
log: { format: plain, level: loud }
defaults:
  interval: 5
  jitter: 10%
repositories:
  - name: population
    origin: https://data.example.org/population/
    mirror: https://mirror.example.org/population/
    intervall: 1m
  - name: population
    origin: /srv/o
    mirror: s3://m/population/
    signatures: required
  - name: weather
    mirror: s3://m/population/
    signatures: off
stores:
  - match: s3://m/
    part_size: 64
    max_requests_per_second: many
)");
    std::vector<std::string> const expected = {
        "mirror.yaml:1:9: listen '127.0.0.1:-1' is not host:port with a port from 0 to 65535 (such as "
        "127.0.0.1:9464, or \"[::1]:9464\" for IPv6)",
        "mirror.yaml:2:30: log: level 'loud' is not one of debug, info, notice, warning, error",
        "mirror.yaml:4:13: defaults: interval '5' is not a duration such as 30s, 5m or 1h30m: give a unit",
        "mirror.yaml:7:5: repository 'population': signatures 'required' (the default) needs allowed_signers (or "
        "signatures: off)",
        "mirror.yaml:9:13: repository 'population': mirror 'https://mirror.example.org/population/' is read-only "
        "(HTTP): a mirror is a folder path or a file:// or s3:// URL",
        "mirror.yaml:10:5: unknown key 'intervall' in repository 'population' (did you mean 'interval'?)",
        "mirror.yaml:11:11: repository name 'population' is used twice (first at line 7)",
        "mirror.yaml:14:5: repository 'population': signatures 'required' needs allowed_signers (or signatures: off)",
        "mirror.yaml:15:5: repository 'weather': missing key 'origin'",
        "mirror.yaml:16:13: repository 'weather': mirror 's3://m/population/' is also the mirror of repository "
        "'population' (line 13)",
        "mirror.yaml:20:16: store 's3://m/': part_size '64' is below 5MiB",
        "mirror.yaml:21:30: store 's3://m/': max_requests_per_second 'many' is not a whole number from 1 to 1000000",
    };
    CHECK(found == expected);
}
