#include "daemon/state/pass_record.hpp"

#include "core/sync/errors.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cmath>
#include <map>

namespace mirror::daemon {

namespace json = boost::json;

double record_time(double t) { return std::round(t * 1000) / 1000; }

double record_now() {
    return record_time(std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count());
}

namespace {

/// The violations `finder` found at `now` replace those it found before (when `decides`;
/// else they are added), each keeping the time it was first found; the other finder's stay.
void take_violations(pass_record& record, std::vector<error> const& found, double now, bool decides,
                     std::string const& finder) {
    std::map<std::string, violation_record> known;
    std::vector<violation_record> violations;
    for (auto& violation : record.violations) {
        if (violation.found_by == finder)
            known.emplace(violation.message, std::move(violation));
        else
            violations.push_back(std::move(violation));
    }
    for (auto const& problem : found) {
        auto it = known.find(problem.message);
        if (it != known.end()) {
            violations.push_back(std::move(it->second));
            known.erase(it);
            continue;
        }
        auto const subject = sync::subject_of(problem);
        violations.push_back({sync::kind_of(problem.code), problem.message, subject.ref, subject.version, now, finder});
    }
    if (!decides) // what only a full look decides stays known until the next one
        for (auto& [message, violation] : known)
            violations.push_back(std::move(violation));
    if (violations.size() > pass_record::max_violations)
        violations.resize(pass_record::max_violations);
    record.violations = std::move(violations);
}

} // namespace

void record_pass(pass_record& record, sync::sync_report const& report, pass_outcome outcome, double now,
                 bool full_recheck) {
    record.last_result = to_string(outcome);
    record.last_finished = now;
    record.partial = report.partial;
    bool const completed = outcome == pass_outcome::ok || outcome == pass_outcome::held;
    if (completed)
        record.last_error.clear();
    else
        record.last_error = report.fatal ? report.fatal->message : std::string(to_string(outcome));
    if (report.refs.empty())
        return; // stopped before the refs: what was known stays

    std::map<std::string, double> behind_since;
    for (auto const& ref : record.refs)
        if (ref.behind_since)
            behind_since[ref.name] = *ref.behind_since;
    std::vector<ref_record> refs;
    for (auto const& ref : report.refs) {
        ref_record next{ref.name, ref.origin_target, ref.mirror_target, ref.versions_behind, std::nullopt};
        if (!ref.in_sync()) {
            auto known = behind_since.find(ref.name);
            next.behind_since = known == behind_since.end() ? now : known->second;
        }
        refs.push_back(std::move(next));
    }
    record.refs = std::move(refs);

    std::map<std::string, double> held_since;
    for (auto const& held : record.held)
        held_since[held.version] = held.since;
    std::vector<held_record> held;
    for (auto const& version : report.held) {
        auto known = held_since.find(version.id);
        held.push_back({version.id, sync::kind_of(version.why.code), version.why.message,
                        known == held_since.end() ? now : known->second});
    }
    record.held = std::move(held);

    take_violations(record, report.violations, now, full_recheck, "pass");
}

void record_origin_check(pass_record& record, std::vector<error> const& found, double now, bool complete) {
    take_violations(record, found, now, complete, "origin_check");
}

std::vector<std::pair<std::string, double>> ref_lags(pass_record const& record, double now) {
    std::vector<std::pair<std::string, double>> lags;
    for (auto const& ref : record.refs)
        lags.emplace_back(ref.name, ref.behind_since ? std::max(0.0, now - *ref.behind_since) : 0.0);
    return lags;
}

json::object to_json(pass_record const& record) {
    json::object o;
    o["last_result"] = record.last_result;
    o["last_error"] = record.last_error;
    if (!record.partial.empty())
        o["partial"] = record.partial;
    if (record.last_event)
        o["last_event"] = *record.last_event;
    if (record.unannounced_change)
        o["unannounced_change"] = *record.unannounced_change;
    if (record.last_finished)
        o["last_finished"] = *record.last_finished;
    if (record.next_pass)
        o["next_pass"] = *record.next_pass;
    json::array refs;
    for (auto const& ref : record.refs) {
        json::object r{{"name", ref.name}, {"origin", ref.origin_target}, {"versions_behind", ref.versions_behind}};
        r["mirror"] = ref.mirror_target ? json::value(*ref.mirror_target) : json::value(nullptr);
        r["behind_since"] = ref.behind_since ? json::value(*ref.behind_since) : json::value(nullptr);
        refs.push_back(std::move(r));
    }
    o["refs"] = std::move(refs);
    json::array held;
    for (auto const& version : record.held)
        held.push_back(json::object{{"version", version.version},
                                    {"reason", version.reason},
                                    {"message", version.message},
                                    {"since", version.since}});
    o["held"] = std::move(held);
    json::array violations;
    for (auto const& v : record.violations)
        violations.push_back(json::object{{"kind", v.kind},
                                          {"message", v.message},
                                          {"ref", v.ref.empty() ? json::value(nullptr) : json::value(v.ref)},
                                          {"version", v.version.empty() ? json::value(nullptr) : json::value(v.version)},
                                          {"since", v.since},
                                          {"found_by", v.found_by}});
    o["violations"] = std::move(violations);
    auto const& audits = record.audits;
    json::object scrub{{"after", audits.scrub.after},
                       {"round_started", audits.scrub.round_started},
                       {"round_bytes", audits.scrub.round_bytes}};
    scrub["last_round_completed"] =
        audits.scrub.last_round_completed ? json::value(*audits.scrub.last_round_completed) : json::value(nullptr);
    scrub["next"] = audits.next_scrub ? json::value(*audits.next_scrub) : json::value(nullptr);
    json::array findings;
    for (auto const& finding : audits.scrub_findings)
        findings.push_back(json::value(finding));
    scrub["findings"] = std::move(findings);
    o["scrub"] = std::move(scrub);
    o["last_full_recheck"] = audits.last_full_recheck ? json::value(*audits.last_full_recheck) : json::value(nullptr);
    o["last_origin_check"] = audits.last_origin_check ? json::value(*audits.last_origin_check) : json::value(nullptr);
    o["next_origin_check"] = audits.next_origin_check ? json::value(*audits.next_origin_check) : json::value(nullptr);
    return o;
}

namespace {

/// Reads members of one JSON object, remembering the first problem.
struct reader {
    json::object const& o;
    std::string where;
    std::string& why;

    bool fail(std::string_view name, std::string_view expected) {
        if (why.empty())
            why = where + std::string(name) + ": " + std::string(expected);
        return false;
    }
    bool text(std::string_view name, std::string& into) {
        auto const* v = o.if_contains(name);
        if (v == nullptr || !v->is_string())
            return fail(name, "not a string");
        into = std::string(v->get_string());
        return true;
    }
    /// A time: a finite number, as record_time() keeps it; `optional` allows null and a
    /// missing member.
    bool time(std::string_view name, std::optional<double>& into, bool optional) {
        if (!number(name, into, optional))
            return false;
        if (into)
            into = record_time(*into);
        return true;
    }
    /// A count: a finite number; `optional` allows null and a missing member.
    bool number(std::string_view name, std::optional<double>& into, bool optional) {
        auto const* v = o.if_contains(name);
        if ((v == nullptr || v->is_null()) && optional)
            return true;
        boost::system::error_code ec;
        double n = v != nullptr && v->is_number() ? v->to_number<double>(ec) : NAN;
        if (ec || !std::isfinite(n) || n < 0)
            return fail(name, "not a number");
        into = n;
        return true;
    }
};

/// The audits' part; members absent from files of older daemons are their defaults.
bool read_audits(json::object const& o, audit_record& into, std::string& why) {
    reader top{o, "", why};
    if (!top.time("last_full_recheck", into.last_full_recheck, true) ||
        !top.time("last_origin_check", into.last_origin_check, true) ||
        !top.time("next_origin_check", into.next_origin_check, true))
        return false;
    auto const* scrub = o.if_contains("scrub");
    if (scrub == nullptr)
        return true;
    if (!scrub->is_object()) {
        why = "scrub: not an object";
        return false;
    }
    reader in{scrub->get_object(), "scrub.", why};
    std::optional<double> started, bytes;
    if (!in.text("after", into.scrub.after) || !in.time("round_started", started, false) ||
        !in.number("round_bytes", bytes, false) ||
        !in.time("last_round_completed", into.scrub.last_round_completed, true) ||
        !in.time("next", into.next_scrub, true))
        return false;
    into.scrub.round_started = *started;
    into.scrub.round_bytes = static_cast<std::uint64_t>(*bytes);
    auto const* findings = scrub->get_object().if_contains("findings");
    if (findings == nullptr || !findings->is_array()) {
        why = "scrub.findings: not a list";
        return false;
    }
    for (auto const& finding : findings->get_array()) {
        if (!finding.is_string()) {
            why = "scrub.findings: not a list of strings";
            return false;
        }
        into.scrub_findings.emplace_back(finding.get_string());
    }
    return true;
}

} // namespace

std::optional<pass_record> pass_record_of(json::value const& value, std::string& why) {
    why.clear();
    auto const* o = value.if_object();
    if (o == nullptr) {
        why = "not an object";
        return std::nullopt;
    }
    pass_record record;
    reader in{*o, "", why};
    if (!in.text("last_result", record.last_result) || !in.text("last_error", record.last_error) ||
        !in.time("last_finished", record.last_finished, true) || !in.time("next_pass", record.next_pass, true))
        return std::nullopt;
    if (auto const* partial = o->if_contains("partial"); partial && partial->is_string())
        record.partial = partial->get_string(); // absent from older state files
    if (!in.time("last_event", record.last_event, true) ||
        !in.time("unannounced_change", record.unannounced_change, true))
        return std::nullopt;
    auto list = [&](char const* name) -> json::array const* {
        auto const* v = o->if_contains(name);
        if (v == nullptr || !v->is_array()) {
            why = std::string(name) + ": not a list";
            return nullptr;
        }
        return &v->get_array();
    };
    auto const* refs = list("refs");
    auto const* held = list("held");
    if (refs == nullptr || held == nullptr)
        return std::nullopt;
    for (std::size_t i = 0; i < refs->size(); ++i) {
        auto where = "refs[" + std::to_string(i) + "].";
        auto const* entry = (*refs)[i].if_object();
        if (entry == nullptr) {
            why = where.substr(0, where.size() - 1) + ": not an object";
            return std::nullopt;
        }
        reader ref{*entry, where, why};
        ref_record r;
        std::optional<double> behind;
        if (!ref.text("name", r.name) || !ref.text("origin", r.origin_target) ||
            !ref.number("versions_behind", behind, false) || !ref.time("behind_since", r.behind_since, true))
            return std::nullopt;
        r.versions_behind = static_cast<std::uint64_t>(*behind);
        if (auto const* mirror = entry->if_contains("mirror"); mirror != nullptr && !mirror->is_null()) {
            std::string target;
            if (!ref.text("mirror", target))
                return std::nullopt;
            r.mirror_target = std::move(target);
        }
        record.refs.push_back(std::move(r));
    }
    if (!read_audits(*o, record.audits, why))
        return std::nullopt;
    for (std::size_t i = 0; i < held->size(); ++i) {
        auto where = "held[" + std::to_string(i) + "].";
        auto const* entry = (*held)[i].if_object();
        if (entry == nullptr) {
            why = where.substr(0, where.size() - 1) + ": not an object";
            return std::nullopt;
        }
        reader version{*entry, where, why};
        held_record h;
        std::optional<double> since;
        if (!version.text("version", h.version) || !version.text("reason", h.reason) ||
            !version.text("message", h.message) || !version.time("since", since, false))
            return std::nullopt;
        h.since = *since;
        record.held.push_back(std::move(h));
    }
    if (auto const* v = o->if_contains("violations"); v != nullptr) { // absent from older daemons' files
        auto const* violations = list("violations");
        if (violations == nullptr)
            return std::nullopt;
        for (std::size_t i = 0; i < violations->size(); ++i) {
            auto where = "violations[" + std::to_string(i) + "].";
            auto const* entry = (*violations)[i].if_object();
            if (entry == nullptr) {
                why = where.substr(0, where.size() - 1) + ": not an object";
                return std::nullopt;
            }
            reader in_entry{*entry, where, why};
            violation_record r;
            std::optional<double> since;
            if (!in_entry.text("kind", r.kind) || !in_entry.text("message", r.message) ||
                !in_entry.time("since", since, false))
                return std::nullopt;
            for (auto [name, into] :
                 {std::pair{"ref", &r.ref}, std::pair{"version", &r.version}, std::pair{"found_by", &r.found_by}})
                if (auto const* field = entry->if_contains(name); field != nullptr && field->is_string())
                    *into = std::string(field->get_string());
            r.since = *since;
            record.violations.push_back(std::move(r));
        }
    }
    return record;
}

} // namespace mirror::daemon
