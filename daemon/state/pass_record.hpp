#pragma once
// What the last passes of a repository found, as `status`, /status and the clock metrics
// show it: the last result and error, the refs with since when each has been behind, the
// held versions with since when each has been held. Kept in the state file, so that a
// restart resets none of it: an alert on "behind for an hour" must fire for a daemon that
// restarts every ten minutes, and a held version whose reason changes stays held since
// it was first held.

#include "core/sync/report.hpp"
#include "core/sync/scrub.hpp"
#include "daemon/metrics/metrics.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace boost::json {
class object;
class value;
} // namespace boost::json

namespace mirror::daemon {

/// A ref as the last pass that reached the refs saw it.
struct ref_record {
    std::string name;
    std::string origin_target;
    std::optional<std::string> mirror_target; ///< absent when the mirror lacks the ref
    std::uint64_t versions_behind = 0;
    /// Unix seconds: the first pass that found it out of sync (out of sync ever since);
    /// absent while in sync.
    std::optional<double> behind_since;

    friend bool operator==(ref_record const&, ref_record const&) = default;
};

/// A version the last pass that reached it held.
struct held_record {
    std::string version;
    std::string reason;  ///< the kind (sync::kind_of), as in fdl_mirror_versions_held
    std::string message; ///< the error's message, which names the object
    double since = 0;    ///< unix seconds: the first pass that held it (whatever its reason)

    friend bool operator==(held_record const&, held_record const&) = default;
};

/// An immutability violation the passes found and still find (a moved tag, a rewritten
/// file): what status and fdl_mirror_violations show, once per finding.
struct violation_record {
    std::string kind;    ///< sync::kind_of ("tag_moved")
    std::string message; ///< the error's message, which names the object
    std::string ref;     ///< the ref it is about (sync::subject_of), "" when none
    std::string version; ///< the version it is about, "" when none
    double since = 0;    ///< unix seconds: the first pass that found it
    /// What found it, and so what decides when it is gone: "pass" (record_pass), or
    /// "origin_check" (record_origin_check: the origin's data files, compared daily).
    std::string found_by = "pass";

    friend bool operator==(violation_record const&, violation_record const&) = default;
};

/// The scheduled audits' part of the record.
struct audit_record {
    std::optional<double> last_full_recheck; ///< unix seconds: the last pass that re-examined published versions
    sync::scrub_position scrub;
    std::optional<double> next_scrub;        ///< unix seconds: when the next scrub step is due
    /// What the scrub found wrong in the mirror's data files, since the last round that
    /// found nothing ("mirror: KEY: why"), at most max_findings of them.
    std::vector<std::string> scrub_findings;
    static constexpr std::size_t max_findings = 100;
    std::optional<double> last_origin_check; ///< unix seconds: the origin's data files last compared
    std::optional<double> next_origin_check;

    friend bool operator==(audit_record const&, audit_record const&) = default;
};

struct pass_record {
    std::string last_result;             ///< "ok", "held", "failed", "timeout"; "" before any pass
    std::string last_error;              ///< why the last pass failed; "" after one that completed
    std::optional<double> last_finished; ///< unix seconds
    std::optional<double> next_pass;     ///< unix seconds: when the next pass was due, as scheduled
    /// What the mirror follows when partial (sync_report::partial), as of the last pass; ""
    /// for everything. The refs below are then the followed ones alone.
    std::string partial;
    /// Passes driven by events: when the last event accepted for the repository came, and
    /// when the last pass not started by one, that found the origin changed, began (unix
    /// seconds; FdlMirrorEventsMissing compares them, across restarts).
    std::optional<double> last_event;
    std::optional<double> unannounced_change;
    std::vector<ref_record> refs;
    std::vector<held_record> held;
    /// Violations known now: those of the last full recheck and of the quick passes since
    /// (a quick pass does not re-examine published versions: it adds, never clears).
    std::vector<violation_record> violations;
    static constexpr std::size_t max_violations = 100; ///< a hostile origin cannot grow the file past this
    audit_record audits;

    friend bool operator==(pass_record const&, pass_record const&) = default;
};

/// Takes the violations a check of the origin's data files found at `now` into `record`:
/// they replace those the previous check found (each keeping its first sight), and leave
/// the passes' own alone. `complete` false (a check stopped early): it only adds.
void record_origin_check(pass_record& record, std::vector<error> const& found, double now, bool complete);

/// `t` (unix seconds) as the record keeps it: to the millisecond, so that a time read
/// back from the state file is, to the last bit, the time written (Boost.JSON 1.81's
/// parser can land a unit in the last place away from the number it reads).
double record_time(double t);
/// Now, as the record keeps times.
double record_now();

/// Takes a pass that ended at `now` with `outcome` into `record`, keeping the "since" times
/// of refs still behind and of versions still held. A pass that stopped before it reached
/// the refs (its report has none) keeps the refs, held versions and violations last known:
/// it did not look. A violation keeps the "since" of the first pass that found it; a quick
/// pass (`full_recheck` false) adds violations and forgets none.
void record_pass(pass_record& record, sync::sync_report const& report, pass_outcome outcome, double now,
                 bool full_recheck = true);

/// Each ref's lag at `now` (0 when in sync), for fdl_mirror_ref_lag_seconds.
std::vector<std::pair<std::string, double>> ref_lags(pass_record const& record, double now);

/// The record as JSON (the state file's "status" member and the status command's output).
boost::json::object to_json(pass_record const& record);
/// The record from JSON written by to_json(); nullopt (with `why`) when it is not one.
std::optional<pass_record> pass_record_of(boost::json::value const& value, std::string& why);

} // namespace mirror::daemon
