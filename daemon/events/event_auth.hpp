#pragma once
// Authenticating the events that start passes (docs/events.md). A webhook is signed: an
// HMAC-SHA256, under the repository's secret, of its timestamp, a dot, its path
// (`/hooks/REPOSITORY`), a dot and its body, in the header the common senders use
// (`X-Hub-Signature-256: sha256=HEX`), with the timestamp in `X-Fdl-Timestamp` (unix
// seconds). Signing the timestamp with the body is what makes the window mean something: a
// captured request cannot be sent again with a fresh time; signing the path keeps a
// request made for one repository from being sent to another that shares its secret.
// Within the window, a signature already seen is refused too. An S3 notification carries the
// configured token in its URL (`?token=`): RGW and AWS sign nothing they push.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace mirror::daemon {

/// Why an event request was refused: fdl_mirror_events_refused_total's `reason`.
enum class event_refusal {
    missing_signature,
    bad_signature,
    missing_timestamp,
    stale_timestamp,
    replayed,
    unknown_repository,
    bad_token,
    malformed,
    too_large,
};
std::string_view to_string(event_refusal why) noexcept;

inline constexpr std::string_view signature_header = "X-Hub-Signature-256";
inline constexpr std::string_view timestamp_header = "X-Fdl-Timestamp";

/// "sha256=" and the lower-case hex HMAC-SHA256 of `timestamp` "." `path` "." `body` under
/// `secret`; `path` is the request's, "/hooks/REPOSITORY".
std::string webhook_signature(std::string_view secret, std::string_view timestamp, std::string_view path,
                              std::string_view body);

/// What check_webhook found: nullopt when authentic and in time, else why not; `sent`
/// is the timestamp read.
struct webhook_check {
    std::optional<event_refusal> refused;
    std::int64_t sent = 0;
};

/// Checks a webhook's headers against its path, its body and the repository's secret at
/// `now` (unix seconds): authentic, and its time within `window` of now. The MAC is
/// compared in constant time.
webhook_check check_webhook(std::string_view secret, std::string_view timestamp, std::string_view signature,
                            std::string_view path, std::string_view body, std::int64_t now,
                            std::chrono::seconds window);

/// The signatures of one repository accepted within the window, so that each is accepted
/// once. Only authentic requests reach it (their MAC is checked first), so only the holder
/// of that repository's secret can fill it. Bounded: when `max_entries` are remembered and
/// none has expired, a new one is refused (as replayed) rather than an old one forgotten,
/// which would let that one be replayed.
class replay_guard {
public:
    explicit replay_guard(std::size_t max_entries = 4096) : max_entries_(max_entries) {}
    /// True the first time `signature` is seen before `expires` (unix seconds).
    bool first_sight(std::string const& signature, std::int64_t expires, std::int64_t now);

private:
    std::size_t max_entries_;
    std::map<std::string, std::int64_t> seen_; ///< signature -> when it may be forgotten
};

} // namespace mirror::daemon
