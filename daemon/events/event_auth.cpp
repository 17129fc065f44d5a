#include "daemon/events/event_auth.hpp"

#include "verify/sha256.hpp"

#include <charconv>
#include <cstdlib>

namespace mirror::daemon {

std::string_view to_string(event_refusal why) noexcept {
    switch (why) {
    case event_refusal::missing_signature: return "missing_signature";
    case event_refusal::bad_signature: return "bad_signature";
    case event_refusal::missing_timestamp: return "missing_timestamp";
    case event_refusal::stale_timestamp: return "stale_timestamp";
    case event_refusal::replayed: return "replayed";
    case event_refusal::unknown_repository: return "unknown_repository";
    case event_refusal::bad_token: return "bad_token";
    case event_refusal::malformed: return "malformed";
    case event_refusal::too_large: return "too_large";
    }
    return "malformed";
}

std::string webhook_signature(std::string_view secret, std::string_view timestamp, std::string_view path,
                              std::string_view body) {
    std::string signed_text;
    signed_text.reserve(timestamp.size() + path.size() + 2 + body.size());
    signed_text.append(timestamp).append(".").append(path).append(".").append(body);
    return "sha256=" + verify::to_hex(verify::hmac_sha256(secret, signed_text));
}

webhook_check check_webhook(std::string_view secret, std::string_view timestamp, std::string_view signature,
                            std::string_view path, std::string_view body, std::int64_t now,
                            std::chrono::seconds window) {
    webhook_check out;
    if (signature.empty()) {
        out.refused = event_refusal::missing_signature;
        return out;
    }
    auto [end, ec] = std::from_chars(timestamp.data(), timestamp.data() + timestamp.size(), out.sent);
    if (timestamp.empty() || ec != std::errc() || end != timestamp.data() + timestamp.size() || timestamp.size() > 12) {
        out.refused = event_refusal::missing_timestamp; // not a time: as good as none
        return out;
    }
    // The MAC first: an unsigned request learns nothing about the clock.
    if (!verify::same_bytes(webhook_signature(secret, timestamp, path, body), signature))
        out.refused = event_refusal::bad_signature;
    else if (std::llabs(now - out.sent) > window.count())
        out.refused = event_refusal::stale_timestamp;
    return out;
}

bool replay_guard::first_sight(std::string const& signature, std::int64_t expires, std::int64_t now) {
    std::erase_if(seen_, [&](auto const& entry) { return entry.second < now; });
    if (seen_.contains(signature) || seen_.size() >= max_entries_)
        return false;
    seen_.emplace(signature, expires);
    return true;
}

} // namespace mirror::daemon
