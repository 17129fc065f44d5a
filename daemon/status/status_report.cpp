#include "daemon/status/status_report.hpp"

#include "daemon/state/pass_record.hpp"

#include "daemon/common/terminal_text.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <cmath>
#include <ctime>

namespace mirror::daemon {

namespace json = boost::json;

std::string utc_time(double unix_seconds) {
    std::time_t t = static_cast<std::time_t>(std::floor(unix_seconds));
    std::tm parts{};
    ::gmtime_r(&t, &parts);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
    return text;
}

namespace {

std::string utc(double unix_seconds) { return utc_time(unix_seconds); }

/// "3h 12m", "45 s", "2d 4h": how long, for a person.
std::string span(double seconds) {
    auto s = static_cast<long long>(std::llround(std::fabs(seconds)));
    if (s < 120)
        return std::to_string(s) + " s";
    if (s < 7200)
        return std::to_string(s / 60) + " min";
    if (s < 172800)
        return std::to_string(s / 3600) + "h " + std::to_string(s % 3600 / 60) + "m";
    return std::to_string(s / 86400) + "d " + std::to_string(s % 86400 / 3600) + "h";
}

/// "2026-12-02T10:03:04Z (3h 12m ago)" or "… (in 4 min)".
std::string when(double unix_seconds, double now) {
    return utc(unix_seconds) + (unix_seconds <= now ? " (" + span(now - unix_seconds) + " ago)"
                                                    : " (in " + span(unix_seconds - now) + ")");
}

json::value time_or_null(std::optional<double> t) { return t ? json::value(*t) : json::value(nullptr); }

json::object repository_json(repository_status const& r, double now) {
    auto const& state = r.state;
    // The record as the state file keeps it, with what a reader wants besides: the empty
    // values as null, each ref's lag now, and what only the daemon knows.
    json::object o = to_json(state.record);
    o["name"] = r.name;
    for (char const* text : {"last_result", "last_error"})
        if (o[text].as_string().empty())
            o[text] = nullptr;
    for (char const* time : {"last_finished", "next_pass"})
        if (!o.contains(time))
            o[time] = nullptr;
    if (!o.contains("partial"))
        o["partial"] = nullptr; // follows everything
    o["last_success"] = time_or_null(state.last_success);
    o["last_attempt"] = time_or_null(state.last_attempt);
    o["consecutive_failures"] = state.consecutive_failures;
    o["failing_since"] = time_or_null(state.failing_since);
    o["in_pass"] = r.in_pass;
    o["role"] = r.role.empty() ? json::value(nullptr) : json::value(r.role);
    o["standing_by_for"] = r.standing_by.empty() ? json::value(nullptr) : json::value(r.standing_by);
    o["lease_anomaly"] = r.lease_anomaly.empty() ? json::value(nullptr) : json::value(r.lease_anomaly);
    if (state.paused)
        o["paused"] = json::object{{"since", time_or_null(state.paused->since > 0 ? std::optional(state.paused->since)
                                                                                    : std::nullopt)},
                                   {"by", state.paused->by},
                                   {"reason", state.paused->reason}};
    else
        o["paused"] = nullptr;
    for (auto& ref : o["refs"].as_array()) {
        auto& j = ref.as_object();
        bool const behind = !j["behind_since"].is_null();
        j["in_sync"] = !behind;
        j["lag_seconds"] = behind ? std::max(0.0, now - j["behind_since"].to_number<double>()) : 0.0;
    }
    auto& scrub = o["scrub"].as_object();
    if (scrub["round_started"].to_number<double>() == 0)
        scrub["round_started"] = nullptr; // no round in progress
    o["attention"] = needs_attention(r);
    return o;
}

} // namespace

bool needs_attention(repository_status const& repository) {
    auto const& record = repository.state.record;
    return record.last_result == "failed" || record.last_result == "timeout" || !record.held.empty() ||
           !record.violations.empty() ||
           !record.audits.scrub_findings.empty() || !repository.lease_anomaly.empty();
}

std::string status_json(std::vector<repository_status> const& repositories, double now, std::string const& source,
                        std::optional<reload_summary> const& last_reload) {
    json::array list;
    for (auto const& r : repositories)
        list.push_back(repository_json(r, now));
    json::object o{{"time", now}, {"source", source}};
    if (source == "daemon") {
        if (last_reload) {
            json::array problems;
            for (auto const& problem : last_reload->problems)
                problems.push_back(json::value(problem));
            o["last_reload"] = json::object{{"at", last_reload->at},
                                            {"result", last_reload->applied ? "applied" : "refused"},
                                            {"problems", std::move(problems)}};
        } else {
            o["last_reload"] = nullptr;
        }
    }
    o["repositories"] = std::move(list);
    return json::serialize(o) + "\n";
}

std::string status_text(std::vector<repository_status> const& repositories, double now) {
    std::string out;
    for (auto const& r : repositories) {
        auto const& state = r.state;
        auto const& record = state.record;
        out += terminal_safe(r.name, false) + ": ";
        if (!r.standing_by.empty())
            out += "standing by (" + terminal_safe(r.standing_by, false) + " holds the lease)";
        else if (record.last_result.empty())
            out += "no pass recorded yet";
        else
            out += "last pass " + record.last_result + (record.last_finished ? " at " + when(*record.last_finished, now) : "");
        if (r.in_pass)
            out += "; a pass is running";
        out += "\n";
        if (state.paused)
            out += "  paused:        " +
                   (state.paused->since > 0 ? "since " + when(state.paused->since, now) : std::string("yes")) +
                   (state.paused->by.empty() ? std::string() : " by " + terminal_safe(state.paused->by, false)) +
                   (state.paused->reason.empty() ? std::string() : ": " + terminal_safe(state.paused->reason, false)) +
                   " (no pass runs until `fdl-mirror resume`)\n";
        if (state.last_success && record.last_result != "ok" && record.last_result != "held")
            out += "  last success:  " + when(*state.last_success, now) + "\n";
        if (!record.partial.empty())
            out += "  partial:       " + terminal_safe(record.partial, false) + " (refs below: the followed ones)\n";
        if (!record.last_error.empty())
            out += "  last error:    " + terminal_safe(record.last_error, false) + "\n";
        if (!r.lease_anomaly.empty())
            out += "  lease anomaly: " + terminal_safe(r.lease_anomaly, false) + "\n";
        if (state.consecutive_failures > 0)
            out += "  failures:      " + std::to_string(state.consecutive_failures) + " in a row" +
                   (state.failing_since ? ", since " + when(*state.failing_since, now) : std::string()) + "\n";
        if (record.next_pass)
            out += "  next pass:     " + when(*record.next_pass, now) + "\n";
        for (auto const& ref : record.refs) {
            out += "  ref " + terminal_safe(ref.name, false) + ": ";
            if (!ref.behind_since) {
                out += "in sync at " + terminal_safe(ref.origin_target, false) + "\n";
                continue;
            }
            out += "behind for " + span(now - *ref.behind_since) + " (since " + utc(*ref.behind_since) + "), " +
                   std::to_string(ref.versions_behind) + " version(s); origin " + terminal_safe(ref.origin_target, false) +
                   ", mirror " + (ref.mirror_target ? terminal_safe(*ref.mirror_target, false) : std::string("(none)")) + "\n";
        }
        auto const& audits = record.audits;
        if (audits.last_full_recheck)
            out += "  full recheck:  " + when(*audits.last_full_recheck, now) + "\n";
        if (audits.last_origin_check)
            out += "  origin check:  " + when(*audits.last_origin_check, now) + "\n";
        if (audits.scrub.last_round_completed)
            out += "  scrub:         last round complete " + when(*audits.scrub.last_round_completed, now) + "\n";
        for (auto const& finding : audits.scrub_findings)
            out += "  scrub finding: " + terminal_safe(finding, false) + "\n";
        for (auto const& held : record.held)
            out += "  held " + terminal_safe(held.version, false) + " since " + when(held.since, now) + ": " + held.reason + ": " +
                   terminal_safe(held.message, false) + "\n";
        for (auto const& violation : record.violations)
            out += "  violation " + violation.kind + " since " + when(violation.since, now) + ": " +
                   terminal_safe(violation.message, false) + "\n";
    }
    return out;
}

} // namespace mirror::daemon
