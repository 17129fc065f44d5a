#pragma once
// The events' endpoints (docs/events.md): POST /hooks/REPOSITORY (a signed webhook) and POST
// /events/s3?token=TOKEN (S3 bucket notifications). Each authenticated event asks for a
// pass of the repositories it concerns, coalesced with one running or queued; what came,
// what was refused and why, is counted. Synchronous and quick: RGW waits for the answer
// before it answers the write that caused the event, so the answer never waits on a pass.

#include "config/daemon_config.hpp"
#include "config/event_secrets.hpp"
#include "daemon/common/log.hpp"
#include "daemon/events/event_auth.hpp"
#include "daemon/events/s3_events.hpp"
#include "daemon/metrics/metrics.hpp"
#include "daemon/status/status_server.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mirror::daemon {

/// A repository as the events see it.
struct event_target {
    std::string name;
    config::event_sources sources;
    std::optional<s3_origin> origin; ///< for S3 notifications
};

class event_receiver {
public:
    /// Asks for a pass of `repository` (a configured one), for an event from `source`.
    using start_pass = std::function<void(std::string const& repository, std::string const& source)>;

    /// `started_at` (unix seconds): when this daemon started. A webhook signed before it is
    /// refused as stale: the replays an earlier run accepted are not remembered, and the
    /// passes every repository starts with cover what such an event announced.
    event_receiver(metrics& counted, logger const& log, start_pass start, std::int64_t started_at);

    /// The secrets, the window and the repositories: at start and after each reload.
    void configure(config::event_secrets secrets, std::chrono::seconds window, std::vector<event_target> targets);

    /// The answer to one request at `now` (unix seconds): 202 with the repositories asked
    /// for, 401 for what fails authentication, 400 malformed, 413 too large, 404 another path.
    control_answer handle(event_request const& request, std::int64_t now);

    /// What the head of a request alone refuses, before its body is read (an unsigned
    /// webhook, one for a repository without webhooks, a notification without the token):
    /// the answer, counted as handle() counts it; nullopt when the body must be read and
    /// the request given to handle().
    std::optional<control_answer> check_head(event_request const& head, std::int64_t now);

    /// Whether `target` is an event path (and so for handle()).
    static bool is_event_path(std::string_view target);

private:
    /// The repository named, when it takes webhooks and has a secret; null otherwise.
    event_target const* webhook_target(std::string_view repository) const;
    /// Whether `target`'s query carries the S3 notifications' token.
    bool token_accepted(std::string_view target) const;
    control_answer hook(std::string_view repository, event_request const& request, std::int64_t now);
    control_answer notification(event_request const& request, std::int64_t now);
    /// Counts and answers a refusal; logs it unless one of its kind (for the same
    /// configured repository, `about`) was logged within the last few seconds.
    control_answer refuse(std::string const& source, event_refusal why, std::string const& detail, std::int64_t now,
                          std::string const& about = "");

    metrics& metrics_;
    logger const& log_;
    start_pass start_;
    config::event_secrets secrets_;
    std::chrono::seconds window_{300};
    std::vector<event_target> targets_;
    std::int64_t started_at_;
    /// Per repository: one sender's flood never refuses another repository's events.
    std::map<std::string, replay_guard, std::less<>> replays_;
    std::map<std::string, std::int64_t> last_logged_; ///< refusal kind (and repository) -> when last logged
};

} // namespace mirror::daemon
