// daemon::metrics, the part that follows each repository's passes and audits: its clocks,
// what each pass found, the scrub and the origin check (metrics.cpp has the rest).

#include "daemon/metrics/metrics.hpp"

#include "daemon/metrics/detail/metrics_impl.hpp"

#include "core/sync/errors.hpp"
#include "core/sync/origin_data_check.hpp"
#include "core/sync/scrub.hpp"
#include "daemon/state/pass_record.hpp"
#include "verify/errors.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace mirror::daemon {

namespace {
using prometheus::Labels;
} // namespace

void metrics::restore_times(std::string const& repo, std::optional<double> last_success,
                            std::optional<double> last_attempt) {
    if (last_success)
        impl_->last_success.Add({{"repo", repo}}).Set(*last_success);
    if (last_attempt)
        impl_->last_attempt.Add({{"repo", repo}}).Set(*last_attempt);
}

void metrics::set_failing_since(std::string const& repo, std::optional<double> since) {
    impl_->failing_since.Add({{"repo", repo}}).Set(since.value_or(0));
}

void metrics::set_clocks(std::string const& repo, pass_record const& record) {
    auto& m = *impl_;
    m.remove_clocks(repo);
    auto& made = m.clock_series[repo];
    // As for the drift gauges: the refs behind longest, at most max_ref_series of them.
    for (auto const* ref : refs_with_clocks(record.refs, max_ref_series)) {
        Labels labels{{"repo", repo}, {"ref", ref_label(ref->name)}};
        m.ref_behind_since.Add(labels).Set(ref->behind_since.value_or(0));
        made.push_back(std::move(labels));
    }
    if (m.intervals.contains(repo)) { // the kinds' series exist from set_repositories, at 0
        std::map<std::string, double> by_kind{{"refused_ref", 0}}; // made on first use, reset like the rest
        for (auto kind : m.violation_kinds)
            by_kind[kind] = 0;
        for (auto const& violation : record.violations)
            by_kind[violation.kind] += 1;
        for (auto const& [kind, count] : by_kind)
            m.violations_known.Add({{"repo", repo}, {"kind", kind}}).Set(count);
    }
    for (auto const* held : oldest_held(record.held, max_held_series)) {
        Labels labels{{"repo", repo}, {"version", held->version}, {"reason", held->reason}};
        m.version_held_since.Add(labels).Set(held->since);
        made.push_back(std::move(labels));
    }
}

void metrics::set_audits(std::string const& repo, audit_record const& audits) {
    auto& m = *impl_;
    if (!m.intervals.contains(repo))
        return;
    Labels r{{"repo", repo}};
    m.last_full_recheck.Add(r).Set(audits.last_full_recheck.value_or(0));
    m.last_origin_check.Add(r).Set(audits.last_origin_check.value_or(0));
    m.scrub_round_started.Add(r).Set(audits.scrub.round_started);
    m.scrub_round_completed.Add(r).Set(audits.scrub.last_round_completed.value_or(0));
}

void metrics::scrub_step(std::string const& repo, sync::scrub_step_report const& report, audit_record const& audits) {
    auto& m = *impl_;
    if (!m.intervals.contains(repo))
        return;
    Labels r{{"repo", repo}};
    m.scrub_files.Add(r).Increment(static_cast<double>(report.files));
    m.scrub_bytes.Add(r).Increment(static_cast<double>(report.bytes));
    for (auto const& finding : report.findings)
        m.scrub_findings.Add({{"repo", repo}, {"kind", sync::kind_of(finding.code)}}).Increment();
    double progress = report.ledger_bytes == 0 ? 1.0
                                               : static_cast<double>(audits.scrub.round_bytes) /
                                                     static_cast<double>(report.ledger_bytes);
    m.scrub_progress.Add(r).Set(report.round_completed ? 1.0 : std::min(1.0, progress));
    set_audits(repo, audits);
}

void metrics::origin_check(std::string const& repo, sync::origin_data_report const& report,
                           audit_record const& audits) {
    auto& m = *impl_;
    if (!m.intervals.contains(repo))
        return;
    for (auto const& violation : report.violations) {
        std::string kind = sync::kind_of(violation.code);
        m.violations.Add({{"repo", repo}, {"kind", kind}}).Increment();
        m.violation_seen[repo].insert(kind);
    }
    set_audits(repo, audits);
}

void metrics::pass_started(std::string const& repo, double now) {
    impl_->last_attempt.Add({{"repo", repo}}).Set(now);
}

void metrics::pass_finished(std::string const& repo, sync::sync_report const& report, finished_pass const& pass) {
    auto& m = *impl_;
    Labels r{{"repo", repo}};
    m.passes.Add({{"repo", repo}, {"result", to_string(pass.outcome)}}).Increment();
    m.duration_of(repo).Observe(pass.duration_seconds);
    if (pass.outcome == pass_outcome::ok || pass.outcome == pass_outcome::held)
        m.last_success.Add(r).Set(pass.finished_at);
    // Only what this pass saw: a pass that failed at the mirror says nothing of the origin.
    if (report.origin_up)
        m.origin_up.Add(r).Set(*report.origin_up ? 1 : 0);
    if (report.mirror_up)
        m.mirror_up.Add(r).Set(*report.mirror_up ? 1 : 0);
    m.copied_bytes.Add(r).Increment(static_cast<double>(report.bytes_copied));
    m.copied_files.Add(r).Increment(static_cast<double>(report.files_copied));
    m.untrusted_keys.Add(r).Set(static_cast<double>(report.announced_keys.announced_not_trusted.size()));
    m.allowed_signers_problems.Add(r).Set(static_cast<double>(report.allowed_signers_skipped));
    // A pass that stopped before the refs knows nothing pending unless it says so: the last
    // values stay, as the drift's do.
    if (!report.refs.empty() || report.pending_files > 0) {
        m.pending_files.Add(r).Set(static_cast<double>(report.pending_files));
        m.pending_bytes.Add(r).Set(static_cast<double>(report.pending_bytes));
    }

    // Drift: only when the pass got as far as the refs (an early stop keeps the last known).
    if (!report.refs.empty()) {
        std::map<std::string, double> lag(pass.ref_lag_seconds.begin(), pass.ref_lag_seconds.end());
        auto& seen = m.refs_seen[repo];
        std::set<std::string> now;
        m.refs_total.Add(r).Set(static_cast<double>(report.refs.size()));
        m.refs_out_of_sync.Add(r).Set(static_cast<double>(
            std::count_if(report.refs.begin(), report.refs.end(), [](auto const& s) { return !s.in_sync(); })));
        for (auto const* shown : refs_with_series(report.refs, lag, max_ref_series)) {
            auto const& state = *shown;
            Labels labels{{"repo", repo}, {"ref", ref_label(state.name)}};
            m.ref_in_sync.Add(labels).Set(state.in_sync() ? 1 : 0);
            m.ref_behind.Add(labels).Set(static_cast<double>(state.versions_behind));
            m.ref_lag.Add(labels).Set(state.in_sync() ? 0 : lag[state.name]);
            now.insert(state.name);
        }
        for (auto const& gone : seen)
            if (!now.contains(gone))
                for (auto* family : {&m.ref_in_sync, &m.ref_behind, &m.ref_lag})
                    family->Remove(&family->Add({{"repo", repo}, {"ref", ref_label(gone)}}));
        seen = std::move(now);
    }

    std::map<std::string, double> held_by_reason;
    for (auto const& reason : m.held_seen[repo])
        held_by_reason[reason] = 0; // a reason no longer seen drops to 0
    for (auto const& held : report.held) {
        std::string kind = sync::kind_of(held.why.code);
        held_by_reason[kind] += 1;
        if (held.why.code.category() == verify::verify_category())
            m.signature_checks.Add({{"repo", repo}, {"result", signature_result_of(held.why.code)}}).Increment();
        else if (is_integrity_failure(held.why.code)) {
            m.integrity_failures.Add({{"repo", repo}, {"kind", kind}}).Increment();
            m.integrity_seen[repo].insert(kind);
        }
    }
    for (auto const& [reason, count] : held_by_reason) {
        m.versions_held.Add({{"repo", repo}, {"reason", reason}}).Set(count);
        m.held_seen[repo].insert(reason);
    }
    if (!report.signers.empty())
        m.signature_checks.Add({{"repo", repo}, {"result", "valid"}}).Increment(static_cast<double>(report.signers.size()));
    for (auto const& violation : report.violations) {
        std::string kind = sync::kind_of(violation.code);
        m.violations.Add({{"repo", repo}, {"kind", kind}}).Increment();
        m.violation_seen[repo].insert(kind);
    }
    // Known only after a re-examination of the published versions, which reaches the refs.
    if (!report.refs.empty())
        m.versions_unverified.Add(r).Set(static_cast<double>(report.unverified.size()));
    for (auto const& problem : report.published_with_problems) {
        std::string kind = sync::kind_of(problem.why.code);
        m.version_problems.Add({{"repo", repo}, {"kind", kind}}).Increment();
        m.problem_seen[repo].insert(kind);
    }
}

} // namespace mirror::daemon
