#pragma once
// The state behind daemon::metrics: its registry, every family and the series it keeps.
// Private to daemon/metrics/metrics.cpp and daemon/metrics/metrics_passes.cpp, the two files that know
// prometheus-cpp (docs/development.md, "Metrics, alerts and logs").

#include "daemon/metrics/metrics.hpp"

#include "daemon/metrics/metric_series.hpp"
#include "daemon/metrics/process_metrics.hpp"
#include "daemon/metrics/request_counts.hpp"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <map>
#include <memory>
#include <set>
#include <string>

namespace mirror::daemon {

struct metrics::impl {
    using Counter = prometheus::Counter;
    using Gauge = prometheus::Gauge;
    using Histogram = prometheus::Histogram;
    using Labels = prometheus::Labels;
    template <class T>
    using Family = prometheus::Family<T>;

    // Label values created at 0 with each repository, so the alert rules' increase() and
    // absent() see a series before its first event (systemd/fdl-mirror.rules.yml).
    static constexpr char const* pass_results[] = {"ok", "failed", "held", "timeout"};
    /// What the scrub can find wrong with a data file of the mirror (sync::kind_of).
    static constexpr char const* scrub_kinds[] = {"size_mismatch", "sha256_mismatch", "missing_file",
                                                  "not_a_regular_file"};
    static constexpr char const* signature_results[] = {"valid", "invalid", "missing", "untrusted"};
    static constexpr char const* integrity_kinds[] = {"size_mismatch", "sha256_mismatch", "missing_file"};
    static constexpr char const* violation_kinds[] = {
        "version_rewritten", "file_deleted_at_origin", "file_added_at_origin", "tag_moved",
        "branch_rewound",    "fdl_json_changed",       "data_file_changed_at_origin"};

    std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
    Family<Gauge>& build_info = prometheus::BuildGauge()
                                    .Name("fdl_mirror_build_info")
                                    .Help("Always 1; the labels say what this build is and can do")
                                    .Register(*registry);
    Family<Gauge>& repositories = prometheus::BuildGauge()
                                      .Name("fdl_mirror_repositories")
                                      .Help("Repositories in the configuration")
                                      .Register(*registry);
    Gauge& repository_count = repositories.Add({});
    Gauge& reload_success = single_gauge("fdl_mirror_config_reload_success",
                                         "1 when the last reload (SIGHUP) was applied, or none was asked; 0 when refused");
    Gauge& reload_time =
        single_gauge("fdl_mirror_config_reload_timestamp_seconds", "When the last reload was asked (unix seconds); 0: none");
    // The process's own, under the names every Prometheus client library uses.
    Gauge& process_start = single_gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds");
    Counter& process_cpu = prometheus::BuildCounter()
                               .Name("process_cpu_seconds_total")
                               .Help("Total user and system CPU time spent in seconds")
                               .Register(*registry)
                               .Add({});
    Counter& catalog_reads = prometheus::BuildCounter()
                                 .Name("fdl_mirror_catalog_reads_total")
                                 .Help("Frozen catalogs read by the catalog gate")
                                 .Register(*registry)
                                 .Add({});
    Counter& catalog_batches = prometheus::BuildCounter()
                                   .Name("fdl_mirror_catalog_read_batches_total")
                                   .Help("The batches those catalogs were read in (catalogs waiting are read together)")
                                   .Register(*registry)
                                   .Add({});
    Family<Counter>& reader_failures = prometheus::BuildCounter()
                                           .Name("fdl_mirror_catalog_reader_failures_total")
                                           .Help("Catalogs whose sandboxed reader crashed or went past a limit")
                                           .Register(*registry);
    Counter& readers_crashed = reader_failures.Add({{"kind", "crashed"}});
    Counter& readers_limited = reader_failures.Add({{"kind", "limit"}});
    Counter& readers_started = prometheus::BuildCounter()
                                   .Name("fdl_mirror_catalog_readers_started_total")
                                   .Help("Sandboxed catalog reader processes started")
                                   .Register(*registry)
                                   .Add({});
    std::uint64_t catalog_reads_seen = 0;   ///< the totals last given to set_catalog_reads
    std::uint64_t catalog_batches_seen = 0;
    catalog_reader_totals readers_seen;     ///< the totals last given to set_catalog_readers
    Gauge& process_resident = single_gauge("process_resident_memory_bytes", "Resident memory size in bytes");
    Gauge& process_virtual = single_gauge("process_virtual_memory_bytes", "Virtual memory size in bytes");
    Gauge& process_open_fds = single_gauge("process_open_fds", "Number of open file descriptors");
    Gauge& process_max_fds = single_gauge("process_max_fds", "Maximum number of open file descriptors");
    Family<Gauge>& interval = gauge("fdl_mirror_interval_seconds", "Configured time between two passes");
    Family<Gauge>& last_success =
        gauge("fdl_mirror_last_success_timestamp_seconds", "When a pass last completed (held versions included); 0: never");
    Family<Gauge>& last_attempt = gauge("fdl_mirror_last_attempt_timestamp_seconds", "When a pass last started");
    Family<Gauge>& failing_since = gauge("fdl_mirror_failing_since_timestamp_seconds",
                                         "When the first of the passes failing in a row started; 0: the last pass completed");
    Family<Histogram>& pass_duration = prometheus::BuildHistogram()
                                           .Name("fdl_mirror_pass_duration_seconds")
                                           .Help("How long passes take")
                                           .Register(*registry);
    Family<Counter>& passes = counter("fdl_mirror_passes_total", "Passes by result: ok, held, failed, timeout");
    Family<Gauge>& ref_in_sync = gauge("fdl_mirror_ref_in_sync", "1 when the mirror's ref names the origin's version");
    Family<Gauge>& ref_behind =
        gauge("fdl_mirror_ref_versions_behind", "Versions on the origin ref's line the mirror has not published");
    Family<Gauge>& ref_lag =
        gauge("fdl_mirror_ref_lag_seconds", "How long the origin has had a version of this ref the mirror lacks");
    Family<Gauge>& refs_total = gauge("fdl_mirror_refs", "Origin refs the mirror follows, as the last pass saw them");
    Family<Gauge>& refs_out_of_sync =
        gauge("fdl_mirror_refs_out_of_sync", "Origin refs whose version the mirror does not name (all of them, "
                                             "whether or not they have series of their own)");
    Family<Gauge>& versions_held = gauge("fdl_mirror_versions_held", "Versions held by the last pass, by reason");
    Family<Gauge>& last_full_recheck = gauge("fdl_mirror_last_full_recheck_timestamp_seconds",
                                             "When a pass last re-examined the published versions at the origin; 0: never");
    Gauge& passes_running = single_gauge("fdl_mirror_passes_running", "Passes (with their audits) running now");
    Gauge& passes_waiting = single_gauge("fdl_mirror_passes_waiting", "Repositories due for a pass, waiting for one of the max_passes slots");
    Gauge& max_passes = single_gauge("fdl_mirror_max_passes", "The configured max_passes: passes that may run at once");
    Gauge& memory_limit = single_gauge("fdl_mirror_transfer_memory_limit_bytes",
                                       "What memory_limit leaves for transfer buffers once the catalog readers have theirs");
    Gauge& memory_in_use = single_gauge("fdl_mirror_transfer_memory_in_use_bytes", "Transfer buffers granted now");
    Gauge& memory_peak = single_gauge("fdl_mirror_transfer_memory_peak_bytes", "The most transfer buffers granted at once since the start");
    Gauge& memory_waiting = single_gauge("fdl_mirror_transfer_memory_waiting", "Transfers waiting for memory to buffer in");
    Family<Gauge>& last_origin_check = gauge("fdl_mirror_last_origin_check_timestamp_seconds",
                                             "When the origin's data files were last compared with the mirror's "
                                             "(origin_check_interval); 0: never");
    Family<Gauge>& scrub_period = gauge("fdl_mirror_scrub_period_seconds",
                                        "The configured scrub_period: every data file of the mirror is read again "
                                        "within it; 0: no scrub");
    Family<Counter>& scrub_files = counter("fdl_mirror_scrub_files_total", "Data files of the mirror the scrub read and checked");
    Family<Counter>& scrub_bytes = counter("fdl_mirror_scrub_bytes_total", "Bytes of the mirror the scrub read and checked");
    Family<Counter>& scrub_findings = counter("fdl_mirror_scrub_findings_total",
                                              "Data files of the mirror that no longer match their ledger, by kind");
    Family<Gauge>& scrub_round_started = gauge("fdl_mirror_scrub_round_started_timestamp_seconds",
                                               "When the scrub's round in progress started; 0: none in progress");
    Family<Gauge>& scrub_round_completed = gauge("fdl_mirror_scrub_round_completed_timestamp_seconds",
                                                 "When the scrub last checked the last data file of a round; 0: never");
    Family<Gauge>& scrub_progress = gauge("fdl_mirror_scrub_round_progress_ratio",
                                          "Share of the mirror's data bytes the round in progress has checked");
    Family<Gauge>& ref_behind_since = gauge("fdl_mirror_ref_behind_since_timestamp_seconds",
                                            "Since when the mirror has lacked the origin's version of this ref; 0: in sync");
    Family<Gauge>& version_held_since = gauge("fdl_mirror_version_held_since_timestamp_seconds",
                                              "Since when this version has been held (whatever its reason); the "
                                              "oldest 20 held versions of a repository");
    Family<Counter>& signature_checks =
        counter("fdl_mirror_signature_checks_total", "Signature checks by result: valid, invalid, missing, untrusted");
    Family<Counter>& integrity_failures =
        counter("fdl_mirror_integrity_failures_total", "Versions held for a failed integrity check, by kind");
    Family<Counter>& violations =
        counter("fdl_mirror_immutability_violations_total", "Broken promises of the origin, by kind");
    Family<Gauge>& allowed_signers_problems =
        gauge("fdl_mirror_allowed_signers_problems",
              "Lines of the repository's allowed_signers file that do not parse, skipped (they grant nothing)");
    Family<Gauge>& versions_unverified =
        gauge("fdl_mirror_versions_unverified",
              "Versions in the mirror whose signature the current policy and keys do not accept (last re-examination)");
    Family<Counter>& version_problems =
        counter("fdl_mirror_version_problems_total",
                "Problems of versions published anyway (files.json disagreeing with the catalog), by kind");
    Family<Gauge>& untrusted_keys = gauge("fdl_mirror_untrusted_announced_keys",
                                          "Keys the origin's fdl.json announces that are not configured here");
    Family<Gauge>& origin_up =
        gauge("fdl_mirror_origin_up", "1 when the last pass that reached for the origin read it, 0 when that failed; "
                                      "absent until a pass did");
    Family<Gauge>& mirror_up =
        gauge("fdl_mirror_mirror_up", "1 when the last pass that reached for the mirror read and wrote it, 0 when "
                                      "that failed; absent until a pass did");
    Family<Counter>& copied_bytes = counter("fdl_mirror_copied_bytes_total", "Bytes copied into the mirror");
    Family<Counter>& copied_files = counter("fdl_mirror_copied_files_total", "Files copied into the mirror");
    Family<Gauge>& pending_files =
        gauge("fdl_mirror_pending_files", "Data files versions not yet published still need in the mirror");
    Family<Gauge>& pending_bytes =
        gauge("fdl_mirror_pending_bytes", "Bytes of the data files versions not yet published still need");
    Family<Gauge>& lease_held =
        gauge("fdl_mirror_lease_held", "1 while this daemon may write the repository's mirror (it holds the "
                                       "repository's lease, or the mirror is a folder this daemon has locked)");
    Family<Gauge>& violations_known =
        gauge("fdl_mirror_violations", "Immutability violations the passes found and still find, by kind (a state: it "
                                       "drops when the finding is gone)");
    Family<Gauge>& paused =
        gauge("fdl_mirror_paused", "1 while the repository is paused (fdl-mirror pause): no pass runs, and the rules "
                                   "silence its standing alerts");
    Family<Gauge>& lease_anomaly =
        gauge("fdl_mirror_lease_anomaly", "1 while the repository's lease, as this daemon last read it, claims to "
                                          "last longer than lease_duration + max_clock_skew: a holder with a wrong "
                                          "clock, or a forged lease (docs/operations.md#fdlmirrorleaseanomaly)");
    Family<Counter>& lease_takeovers = counter(
        "fdl_mirror_lease_takeovers_total", "Leases taken over from another daemon whose lease had expired");
    Family<Counter>& leases_lost =
        counter("fdl_mirror_leases_lost_total", "Leases this daemon held and found taken by another daemon");
    Gauge& members = prometheus::BuildGauge()
                         .Name("fdl_mirror_coordination_members")
                         .Help("Live daemons sharing the repositories, this one included, as last seen")
                         .Register(*registry)
                         .Add({});
    Family<Gauge>& attestation_time = gauge(
        "fdl_mirror_attestation_timestamp_seconds",
        "When this daemon last wrote the mirror's signed attestation (unix seconds); absent until it did");
    Family<Gauge>& attestation_expires =
        gauge("fdl_mirror_attestation_expires_timestamp_seconds",
              "When the mirror's last attestation expires (its verification plus the validity window)");
    Family<Gauge>& attestation_interval =
        gauge("fdl_mirror_attestation_interval_seconds", "The configured attestation interval");
    Family<Gauge>& attestation_validity =
        gauge("fdl_mirror_attestation_validity_seconds", "The configured attestation validity window");
    Family<Counter>& attestation_failures = counter(
        "fdl_mirror_attestation_failures_total", "Attestations that could not be made or written (key, mirror)");
    Family<Gauge>& peer_up =
        gauge("fdl_mirror_peer_up", "1 when the last comparison with this peer (peers:) read it, 0 when it could not");
    Family<Gauge>& peer_divergence = gauge(
        "fdl_mirror_peer_divergence",
        "Divergences between the mirror and this peer at the last comparison: the same version with other bytes, a "
        "tag naming other versions, a branch off the mirror's line, another repository");
    Family<Gauge>& peer_behind = gauge("fdl_mirror_peer_versions_behind",
                                       "Versions this peer is behind the mirror on its most behind ref, at the last "
                                       "comparison");
    Family<Gauge>& peer_max_lag =
        gauge("fdl_mirror_peer_max_lag_versions", "The configured peer_max_lag: FdlMirrorPeerBehind's bound");
    Family<Gauge>& peers_compared_at =
        gauge("fdl_mirror_peers_compared_timestamp_seconds", "When the mirror was last compared with its peers");
    std::map<std::string, std::set<std::string>> peers_seen; ///< by repository
    // Passes driven by events (daemon/events/): the refusals' labels are fixed words, never
    // a name a sender chose, so a sender cannot grow the series.
    Family<Counter>& events_received = counter(
        "fdl_mirror_events_received_total", "Requests to the event paths (/hooks/, /events/s3), before authentication");
    Family<Counter>& events_accepted = counter("fdl_mirror_events_accepted_total",
                                               "Events authenticated that ask for a pass of this repository");
    Family<Counter>& events_refused =
        counter("fdl_mirror_events_refused_total", "Event requests refused, by source and reason");
    Family<Counter>& events_ignored = counter(
        "fdl_mirror_events_ignored_total",
        "S3 event records authenticated but about keys that announce nothing, or about no repository taking them");
    Family<Counter>& passes_by_events =
        counter("fdl_mirror_passes_started_by_events_total", "Passes an event started (or asked for while waiting)");
    Family<Counter>& events_coalesced = counter(
        "fdl_mirror_events_coalesced_total",
        "Authentic events that started no pass of their own: one was pending already (events: min_pass_gap)");
    Family<Gauge>& events_expected =
        gauge("fdl_mirror_events_expected", "1 when the repository's events: lists a source, else 0");
    Family<Gauge>& last_event =
        gauge("fdl_mirror_last_event_timestamp_seconds", "When the last event accepted for the repository came; 0: never");
    Family<Gauge>& unannounced_change = gauge(
        "fdl_mirror_unannounced_change_timestamp_seconds",
        "When the last pass not started by an event, that found the origin changed, began; 0: never");
    Family<Counter>& requests =
        counter("fdl_mirror_requests_total", "HTTP requests the stores sent and got an answer to, by status code");
    Family<Counter>& request_errors = counter(
        "fdl_mirror_request_errors_total", "HTTP requests that failed, or were answered 408, 429 or 5xx, by kind");

    /// Series already made per repository, so a repository removed by a reload loses them.
    std::map<std::string, std::set<std::string>> refs_seen, held_seen, integrity_seen, violation_seen, problem_seen;
    /// The clock series made per repository (set_clocks), to remove those no longer true.
    std::map<std::string, std::vector<Labels>> clock_series;
    std::map<std::string, double> intervals;
    /// Request counters by repository, handed to its stores' observers.
    std::map<std::string, std::shared_ptr<repo_traffic>> traffic;

    ~impl() {
        for (auto& [repo, counted] : traffic)
            counted->cut_loose(); // observers may outlive the registry
    }

    Gauge& single_gauge(char const* name, char const* help) {
        return prometheus::BuildGauge().Name(name).Help(help).Register(*registry).Add({});
    }
    /// Reads /proc into the process_* series (at each scrape).
    void sample_process() {
        auto now = daemon::sample_process();
        if (!now)
            return;
        process_start.Set(now->start_time_seconds);
        if (now->cpu_seconds > process_cpu.Value())
            process_cpu.Increment(now->cpu_seconds - process_cpu.Value());
        process_resident.Set(now->resident_bytes);
        process_virtual.Set(now->virtual_bytes);
        process_open_fds.Set(now->open_fds);
        process_max_fds.Set(now->max_fds);
    }
    Family<Gauge>& gauge(char const* name, char const* help) {
        return prometheus::BuildGauge().Name(name).Help(help).Register(*registry);
    }
    Family<Counter>& counter(char const* name, char const* help) {
        return prometheus::BuildCounter().Name(name).Help(help).Register(*registry);
    }
    Histogram& duration_of(std::string const& repo) {
        static const Histogram::BucketBoundaries buckets{1, 5, 15, 30, 60, 300, 900, 1800, 3600, 7200};
        return pass_duration.Add({{"repo", repo}}, buckets);
    }

    void create(std::string const& repo, double interval_seconds) {
        Labels r{{"repo", repo}};
        interval.Add(r).Set(interval_seconds);
        last_success.Add(r);
        last_attempt.Add(r);
        failing_since.Add(r);
        duration_of(repo);
        for (auto result : pass_results)
            passes.Add({{"repo", repo}, {"result", result}});
        for (auto result : signature_results)
            signature_checks.Add({{"repo", repo}, {"result", result}});
        for (auto kind : integrity_kinds)
            integrity_failures.Add({{"repo", repo}, {"kind", kind}});
        for (auto kind : violation_kinds) {
            violations.Add({{"repo", repo}, {"kind", kind}});
            violations_known.Add({{"repo", repo}, {"kind", kind}});
        }
        untrusted_keys.Add(r);
        copied_bytes.Add(r);
        copied_files.Add(r);
        pending_files.Add(r);
        pending_bytes.Add(r);
        lease_held.Add(r).Set(1);
        lease_anomaly.Add(r);
        paused.Add(r);
        lease_takeovers.Add(r);
        leases_lost.Add(r);
        last_full_recheck.Add(r);
        last_origin_check.Add(r);
        scrub_files.Add(r);
        scrub_bytes.Add(r);
        for (auto kind : scrub_kinds)
            scrub_findings.Add({{"repo", repo}, {"kind", kind}});
        scrub_round_started.Add(r);
        scrub_round_completed.Add(r);
        scrub_progress.Add(r);
        attestation_failures.Add(r);
    }

    /// The attestation's series (its times and settings), which its writer alone exports.
    void remove_attestation(std::string const& repo) {
        Labels r{{"repo", repo}};
        for (auto* family : {&attestation_time, &attestation_expires, &attestation_interval, &attestation_validity})
            remove_repo(*family, repo, {r});
    }

    /// The peers' series of `repo`, but for those in `keep`.
    void remove_peers(std::string const& repo, std::set<std::string> const& keep = {}) {
        std::vector<Labels> gone;
        for (auto const& peer : peers_seen[repo])
            if (!keep.contains(peer))
                gone.push_back({{"repo", repo}, {"peer", peer}});
        for (auto* family : {&peer_up, &peer_divergence, &peer_behind})
            remove_repo(*family, repo, gone);
        if (keep.empty()) {
            Labels r{{"repo", repo}};
            for (auto* family : {&peer_max_lag, &peers_compared_at})
                remove_repo(*family, repo, {r});
        }
        peers_seen[repo] = keep;
    }

    template <class T>
    static void remove_repo(Family<T>& family, std::string const& repo, std::vector<Labels> const& label_sets) {
        for (auto const& labels : label_sets)
            if (labels.at("repo") == repo && family.Has(labels))
                family.Remove(&family.Add(labels));
    }

    void remove_clocks(std::string const& repo) {
        for (auto const& labels : clock_series[repo]) {
            auto& family = labels.contains("ref") ? ref_behind_since : version_held_since;
            if (family.Has(labels))
                family.Remove(&family.Add(labels));
        }
        clock_series.erase(repo);
    }

    /// What a daemon standing by for another's lease must not export: its last pass's view
    /// of the repository (drift, held versions, the stores' health, violations), which the
    /// holder exports fresh; a dashboard summing them would count it twice.
    void standing_by(std::string const& repo) {
        Labels r{{"repo", repo}};
        for (auto* family : {&origin_up, &mirror_up, &pending_files, &pending_bytes, &refs_total, &refs_out_of_sync})
            remove_repo(*family, repo, {r});
        std::vector<Labels> refs, held;
        for (auto const& ref : refs_seen[repo])
            refs.push_back({{"repo", repo}, {"ref", ref}});
        for (auto const& reason : held_seen[repo])
            held.push_back({{"repo", repo}, {"reason", reason}});
        for (auto* family : {&ref_in_sync, &ref_behind, &ref_lag})
            remove_repo(*family, repo, refs);
        remove_repo(versions_held, repo, held);
        refs_seen.erase(repo);
        held_seen.erase(repo);
        remove_clocks(repo);
        remove_attestation(repo);
        remove_peers(repo);
        for (auto kind : violation_kinds)
            violations_known.Add({{"repo", repo}, {"kind", kind}}).Set(0);
        if (violations_known.Has({{"repo", repo}, {"kind", "refused_ref"}}))
            violations_known.Add({{"repo", repo}, {"kind", "refused_ref"}}).Set(0);
    }

    void forget(std::string const& repo) {
        Labels r{{"repo", repo}};
        for (auto* family : {&interval, &last_success, &last_attempt, &failing_since, &untrusted_keys, &origin_up, &mirror_up, &pending_files,
                             &pending_bytes, &versions_unverified, &allowed_signers_problems, &lease_held, &lease_anomaly, &paused,
                             &last_full_recheck, &last_origin_check, &scrub_period, &scrub_round_started, &scrub_round_completed,
                             &scrub_progress, &refs_total, &refs_out_of_sync})
            remove_repo(*family, repo, {r});
        for (auto* family : {&copied_bytes, &copied_files, &lease_takeovers, &leases_lost, &scrub_files, &scrub_bytes,
                             &attestation_failures})
            remove_repo(*family, repo, {r});
        remove_attestation(repo);
        remove_peers(repo);
        remove_repo(events_coalesced, repo, {r});
        for (auto* family : {&passes_by_events, &events_accepted})
            remove_repo(*family, repo, {{{"repo", repo}}, {{"repo", repo}, {"source", "webhook"}},
                                        {{"repo", repo}, {"source", "s3"}}});
        for (auto* family : {&events_expected, &last_event, &unannounced_change})
            remove_repo(*family, repo, {r});
        std::vector<Labels> scrubbed;
        for (auto kind : scrub_kinds)
            scrubbed.push_back({{"repo", repo}, {"kind", kind}});
        remove_repo(scrub_findings, repo, scrubbed);
        if (pass_duration.Has(r))
            pass_duration.Remove(&duration_of(repo));
        std::vector<Labels> results, signatures, integrity, violated, refs, held, problems;
        for (auto result : pass_results)
            results.push_back({{"repo", repo}, {"result", result}});
        for (auto result : signature_results)
            signatures.push_back({{"repo", repo}, {"result", result}});
        for (auto kind : integrity_kinds)
            integrity_seen[repo].insert(kind);
        for (auto kind : violation_kinds)
            violation_seen[repo].insert(kind);
        for (auto const& kind : integrity_seen[repo])
            integrity.push_back({{"repo", repo}, {"kind", kind}});
        violation_seen[repo].insert("refused_ref"); // fdl_mirror_violations has it from set_clocks
        for (auto const& kind : violation_seen[repo])
            violated.push_back({{"repo", repo}, {"kind", kind}});
        for (auto const& ref : refs_seen[repo])
            refs.push_back({{"repo", repo}, {"ref", ref}});
        for (auto const& reason : held_seen[repo])
            held.push_back({{"repo", repo}, {"reason", reason}});
        for (auto const& kind : problem_seen[repo])
            problems.push_back({{"repo", repo}, {"kind", kind}});
        remove_repo(passes, repo, results);
        remove_repo(signature_checks, repo, signatures);
        remove_repo(integrity_failures, repo, integrity);
        remove_repo(violations, repo, violated);
        remove_repo(violations_known, repo, violated);
        remove_repo(version_problems, repo, problems);
        for (auto* family : {&ref_in_sync, &ref_behind, &ref_lag})
            remove_repo(*family, repo, refs);
        remove_repo(versions_held, repo, held);
        remove_clocks(repo);
        for (auto* seen : {&refs_seen, &held_seen, &integrity_seen, &violation_seen, &problem_seen})
            seen->erase(repo);
        if (auto counted = traffic.find(repo); counted != traffic.end()) {
            counted->second->remove_series();
            traffic.erase(counted);
        }
    }
};

} // namespace mirror::daemon
