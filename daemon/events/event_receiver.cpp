#include "daemon/events/event_receiver.hpp"

#include "verify/sha256.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <boost/url/parse.hpp>

#include <algorithm>
#include <cctype>

namespace mirror::daemon {

namespace json = boost::json;

namespace {

constexpr std::string_view hooks_path = "/hooks/";
constexpr std::string_view s3_path = "/events/s3";
constexpr std::int64_t refusal_log_gap = 10; ///< seconds between two log lines of one kind of refusal

std::string_view path_of(std::string_view target) { return target.substr(0, target.find('?')); }

bool is_repository_name(std::string_view name) {
    return !name.empty() && name.size() <= 64 &&
           std::all_of(name.begin(), name.end(), [](char c) {
               return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
           });
}

std::optional<std::string> token_of(std::string_view target) {
    auto parsed = boost::urls::parse_origin_form(target);
    if (!parsed)
        return std::nullopt;
    auto params = parsed->params();
    auto found = params.find("token");
    if (found == params.end() || !(*found).has_value)
        return std::nullopt;
    return std::string((*found).value);
}

control_answer answer(unsigned status, json::object body) { return {status, json::serialize(body) + "\n"}; }

} // namespace

event_receiver::event_receiver(metrics& counted, logger const& log, start_pass start, std::int64_t started_at)
    : metrics_(counted), log_(log), start_(std::move(start)), started_at_(started_at) {}

void event_receiver::configure(config::event_secrets secrets, std::chrono::seconds window,
                               std::vector<event_target> targets) {
    secrets_ = std::move(secrets);
    window_ = window;
    targets_ = std::move(targets);
    std::erase_if(replays_, [&](auto const& entry) {
        return std::none_of(targets_.begin(), targets_.end(), [&](auto const& t) { return t.name == entry.first; });
    });
}

bool event_receiver::is_event_path(std::string_view target) {
    auto path = path_of(target);
    return path.starts_with(hooks_path) || path == s3_path;
}

control_answer event_receiver::handle(event_request const& request, std::int64_t now) {
    auto path = path_of(request.target);
    std::string const source = path == s3_path ? "s3" : "webhook";
    if (!is_event_path(request.target))
        return answer(404, {{"error", "fdl-mirror's event listener serves POST /hooks/REPOSITORY and POST /events/s3"}});
    metrics_.event_received(source);
    if (request.body_too_large)
        return refuse(source, event_refusal::too_large, "a body over 256 KiB", now);
    if (source == "s3")
        return notification(request, now);
    return hook(path.substr(hooks_path.size()), request, now);
}

event_target const* event_receiver::webhook_target(std::string_view repository) const {
    if (!is_repository_name(repository) || !secrets_.webhooks.contains(repository))
        return nullptr;
    auto const target = std::find_if(targets_.begin(), targets_.end(), [&](auto const& t) {
        return t.name == repository && t.sources.webhook;
    });
    return target == targets_.end() ? nullptr : &*target;
}

bool event_receiver::token_accepted(std::string_view target) const {
    auto token = token_of(target);
    return secrets_.s3_token && token && verify::same_bytes(*token, *secrets_.s3_token);
}

std::optional<control_answer> event_receiver::check_head(event_request const& head, std::int64_t now) {
    auto path = path_of(head.target);
    if (!is_event_path(head.target))
        return std::nullopt; // handle() answers 404, with nothing to read
    if (path == s3_path) {
        if (token_accepted(head.target))
            return std::nullopt;
        metrics_.event_received("s3");
        return refuse("s3", event_refusal::bad_token, "the URL's token is missing or wrong", now);
    }
    auto const* target = webhook_target(path.substr(hooks_path.size()));
    std::optional<event_refusal> why;
    if (target == nullptr)
        why = event_refusal::unknown_repository;
    else if (head.signature.empty())
        why = event_refusal::missing_signature;
    else if (head.timestamp.empty())
        why = event_refusal::missing_timestamp;
    if (!why)
        return std::nullopt;
    metrics_.event_received("webhook");
    if (*why == event_refusal::unknown_repository)
        return refuse("webhook", *why, "no webhook for this repository (the name is not logged)", now);
    return refuse("webhook", *why, "for repository " + target->name, now, target->name);
}

control_answer event_receiver::refuse(std::string const& source, event_refusal why, std::string const& detail,
                                      std::int64_t now, std::string const& about) {
    auto const reason = std::string(to_string(why));
    metrics_.event_refused(source, reason);
    // One line per kind of refusal (and configured repository) every few seconds: a flood
    // of bad requests is counted, not copied into the journal, and a flood against one
    // repository does not hide the refusals of another's.
    auto& last = last_logged_[source + "/" + reason + "/" + about];
    if (now - last >= refusal_log_gap) {
        last = now;
        log_.warning({}, source + " event refused (" + reason + "): " + detail);
    }
    unsigned status = why == event_refusal::malformed ? 400 : why == event_refusal::too_large ? 413 : 401;
    return answer(status, {{"refused", reason}});
}

control_answer event_receiver::hook(std::string_view repository, event_request const& request, std::int64_t now) {
    // A name not configured for webhooks is refused as unauthenticated, like a bad
    // signature: the answer does not tell a prober which repositories exist.
    auto const* target = webhook_target(repository);
    if (target == nullptr)
        return refuse("webhook", event_refusal::unknown_repository,
                      "no webhook for this repository (the name is not logged)", now);
    std::string const path = std::string(hooks_path) + std::string(repository);
    auto checked = check_webhook(secrets_.webhooks.find(repository)->second, request.timestamp, request.signature,
                                 path, request.body, now, window_);
    if (checked.refused)
        return refuse("webhook", *checked.refused, "for repository " + target->name, now, target->name);
    if (checked.sent < started_at_)
        return refuse("webhook", event_refusal::stale_timestamp,
                      "for repository " + target->name + ": signed before this daemon started", now, target->name);
    if (!replays_[target->name].first_sight(std::string(request.signature), now + window_.count(), now))
        return refuse("webhook", event_refusal::replayed, "for repository " + target->name, now, target->name);
    metrics_.event_accepted(target->name, "webhook");
    start_(target->name, "webhook");
    return answer(202, {{"repositories", json::array{json::value(target->name)}}});
}

control_answer event_receiver::notification(event_request const& request, std::int64_t now) {
    if (!token_accepted(request.target))
        return refuse("s3", event_refusal::bad_token, "the URL's token is missing or wrong", now);
    std::string why;
    auto records = parse_s3_events(request.body, why);
    if (!records)
        return refuse("s3", event_refusal::malformed, why, now);
    std::vector<s3_origin> origins;
    for (auto const& t : targets_)
        if (t.sources.s3 && t.origin)
            origins.push_back(*t.origin);
    std::size_t ignored = 0;
    auto repositories = repositories_announced(*records, origins, ignored);
    if (ignored > 0)
        metrics_.events_ignored("s3", ignored);
    json::array asked;
    for (auto const& name : repositories) {
        metrics_.event_accepted(name, "s3");
        start_(name, "s3");
        asked.push_back(json::value(name));
    }
    return answer(200, {{"repositories", std::move(asked)}, {"ignored", ignored}});
}

} // namespace mirror::daemon
