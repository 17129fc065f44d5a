#pragma once
// S3 bucket notifications (docs/events.md): the event records an S3 service pushes
// (`{"Records": [{"eventName", "eventSource", "s3": {"bucket": {"name"}, "object":
// {"key"}}}]}`; Ceph RGW POSTs them to an HTTP endpoint through its SNS-compatible topics),
// read as hints: which repositories' origins changed where a pass should look. Nothing in
// a record is trusted beyond that: the pass reads the origin itself.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mirror::daemon {

struct s3_event_record {
    std::string event_name; ///< "ObjectCreated:Put" (RGW) or "s3:ObjectCreated:Put"
    std::string bucket;
    std::string key; ///< decoded: RGW sends it as is, AWS form-URL-encoded ("aws:s3")
};

/// The records of a notification body; nullopt (with `why`) when it is not one. A body
/// with no `Records` (AWS's s3:TestEvent) has none.
std::optional<std::vector<s3_event_record>> parse_s3_events(std::string_view body, std::string& why);

/// Whether a change to `key` (relative to the repository's root) announces something a
/// pass acts on: HEAD, refs.json, a ref, a version's signature or expiry. version.json is
/// not one: refs move after it, and a version no ref names is not mirrored.
bool announces_change(std::string_view key);

/// A repository whose origin is `s3://bucket/prefix`.
struct s3_origin {
    std::string repository;
    std::string bucket;
    std::string prefix; ///< "" or ending in '/'
};
/// The origin of an s3:// location; nullopt for another one.
std::optional<s3_origin> s3_origin_of(std::string const& repository, std::string_view location);

/// The repositories (among `origins`) whose origin holds a key whose change `records`
/// announce, each once, in `origins`' order; `ignored` counts the records that announce
/// nothing to any of them.
std::vector<std::string> repositories_announced(std::vector<s3_event_record> const& records,
                                                std::vector<s3_origin> const& origins, std::size_t& ignored);

} // namespace mirror::daemon
