// The scheduled audits of a repository job (docs/operations.md, "Scheduled audits"): after
// a pass, the daemon that holds the repository's lease runs what is due: a step of the
// scrub of the mirror's data files, and the check of the origin's data files.

#include "daemon/service/repository_job.hpp"

#include "core/attest/compare.hpp"
#include "core/store/store.hpp"
#include "core/sync/errors.hpp"
#include "core/sync/origin_data_check.hpp"
#include "core/sync/scrub.hpp"

#include "core/io/cuttable.hpp"

#include <chrono>

namespace mirror::daemon {

namespace {

double seconds(std::chrono::milliseconds d) { return std::chrono::duration<double>(d).count(); }

bool due(std::optional<double> const& next, double now) { return !next || now >= *next; }

} // namespace

template <class Result>
awaitable<std::optional<Result>> repository_job::run_cuttable(awaitable<Result> work,
                                                              std::optional<std::chrono::milliseconds> limit) {
    in_pass_ = true; // what cancel_pass cuts, and what a shutdown waits for
    cut_reason_.clear();
    cut_failure_ = nullptr;
    auto end = co_await io::run_cuttable(services_.executor, std::move(work), cut_, limit);
    if (end.limit_reached && cut_reason_.empty())
        cut_reason_ = "the pass passed its pass_timeout";
    cut_failure_ = end.failure;
    in_pass_ = false;
    co_return std::move(end.value);
}

// One pass is cuttable work too (repository_job.cpp); so is the reading of the peers.
template awaitable<std::optional<sync::sync_report>>
repository_job::run_cuttable(awaitable<sync::sync_report>, std::optional<std::chrono::milliseconds>);

awaitable<void> repository_job::audits_if_due() {
    if (!last_pass_completed_ || !mirror_ || !origin_ || (lease_ && lease_->in_force() && !lease_->held()))
        co_return; // the last pass did not complete, or another daemon mirrors it
    // The audits' own copy of the configuration: a reload during one replaces cfg_, and a
    // reference into the old one would dangle across the awaits (seen under ASan).
    auto const cfg = cfg_;
    auto const& r = repo_in(*cfg);
    auto const& audits = state_.record.audits;
    double const now = record_now();
    if (r.settings.scrub_period.count() > 0 && due(audits.next_scrub, now))
        co_await scrub_step(r);
    if (!stopping_ && !retired_ && r.settings.origin_check_interval.count() > 0 && due(audits.next_origin_check, now))
        co_await origin_check(r);
    if (!stopping_ && !retired_ && !r.peers.empty() && due(next_peer_compare_, now))
        co_await compare_peers(r);
}

namespace {

/// The mirror and each peer read, then compared two by two (the mirror with each).
struct peer_reading {
    std::optional<attest::location_state> mine;
    std::string mine_problem; ///< why the mirror could not be read
    std::vector<std::unique_ptr<store::store>> stores; ///< by peer; null when it could not be opened
    std::vector<std::optional<attest::location_state>> peers;
    std::vector<std::string> problems;                 ///< by peer: why it could not be read
};

awaitable<peer_reading> read_peers(store::store& mirror, std::string mirror_name,
                                   std::vector<std::unique_ptr<store::store>> stores, std::vector<std::string> names,
                                   std::vector<std::string> open_problems, std::size_t concurrency,
                                   std::uint64_t memory) {
    peer_reading out;
    attest::read_settings settings;
    settings.concurrency = concurrency;
    // A peer's ledger is another party's file: its segments are read within a quarter of
    // the budget (issue 45: a 120 MiB segment took the daemon past memory_limit).
    settings.ledger_memory = memory / 4;
    settings.max_attestation_bytes = attest::attestation_limit(memory);
    auto mine = co_await attest::read_location(mirror, std::move(mirror_name), settings);
    if (!mine) {
        out.mine_problem = mine.error().message;
        co_return out;
    }
    out.mine = std::move(*mine);
    out.problems = std::move(open_problems);
    for (std::size_t i = 0; i < stores.size(); ++i) {
        if (!stores[i]) {
            out.peers.emplace_back();
            continue;
        }
        auto read = co_await attest::read_location(*stores[i], names[i], settings);
        if (read) {
            out.peers.emplace_back(std::move(*read));
        } else {
            out.peers.emplace_back();
            out.problems[i] = read.error().message;
        }
    }
    out.stores = std::move(stores);
    co_return out;
}

} // namespace

awaitable<void> repository_job::compare_peers(config::repository_config const& r) {
    next_peer_compare_ = record_now() + seconds(r.settings.compare_interval);
    std::vector<std::unique_ptr<store::store>> stores;
    std::vector<std::string> problems;
    for (auto const& peer : r.peers) {
        auto opened = open_store_at(peer, store::store_role::origin, "peer", nullptr);
        problems.push_back(opened ? std::string() : opened.error().message);
        stores.push_back(opened ? std::move(*opened) : nullptr);
    }
    auto read = co_await run_cuttable(read_peers(*mirror_, r.mirror, std::move(stores), r.peers, std::move(problems),
                                                 r.settings.concurrency,
                                                 services_.memory != nullptr ? services_.memory->capacity() : 0));
    if (retired_ || stopping_)
        co_return;
    if (!read || !read->mine) {
        services_.log->warning(name_, "peers not compared: " +
                                          (read ? "the mirror: " + read->mine_problem
                                                : cut_reason_.empty() ? std::string("internal error") : cut_reason_));
        co_return;
    }
    std::vector<metrics::peer_result> results;
    for (std::size_t i = 0; i < r.peers.size(); ++i) {
        metrics::peer_result result{r.peers[i]};
        auto const& peer = read->peers[i];
        if (!peer) {
            services_.log->warning(name_, "peer " + r.peers[i] + " not read: " + read->problems[i]);
            results.push_back(std::move(result));
            continue;
        }
        std::vector<store::store*> pair_stores{mirror_.get(), read->stores[i].get()};
        std::vector<attest::location_state> pair{*read->mine, *peer}; // named: GCC 12 and braced temporaries
        auto compared = co_await attest::compare_locations(std::move(pair), std::move(pair_stores));
        result.up = true;
        result.divergences = compared.divergences.size();
        result.behind = compared.most_behind.at(1);
        for (auto const& divergence : compared.divergences)
            services_.log->error(name_, "peer " + r.peers[i] + " diverges from the mirror: " + divergence);
        if (result.behind > r.settings.peer_max_lag)
            services_.log->warning(name_, "peer " + r.peers[i] + " is " + std::to_string(result.behind) +
                                              " version(s) behind the mirror (peer_max_lag " +
                                              std::to_string(r.settings.peer_max_lag) + ")");
        results.push_back(std::move(result));
    }
    services_.stats->peers_compared(name_, results, r.settings.peer_max_lag, record_now());
}

std::size_t repository_job::audit_memory() const {
    // The mirror's ledger and the origin's listing are a co-tenant's and an origin's to
    // grow: walked within a quarter of the budget, as a pass reads them (issue 45).
    return services_.memory != nullptr ? sync::listing_share(services_.memory) : 0;
}

awaitable<void> repository_job::scrub_step(config::repository_config const& r) {
    auto& audits = state_.record.audits;
    double const fraction = seconds(r.settings.scrub_interval) / seconds(r.settings.scrub_period);
    auto position = audits.scrub;
    auto finished = co_await run_cuttable(
        sync::scrub_step(*mirror_, position, fraction, services_.pool, record_now(), r.settings.concurrency,
                         services_.transfers.get(), audit_memory()));
    if (retired_)
        co_return;
    audits.next_scrub = record_time(record_now() + seconds(r.settings.scrub_interval));
    if (!finished) {
        services_.log->warning(name_, "scrub cut: " + (cut_reason_.empty() ? std::string("internal error") : cut_reason_));
        co_return;
    }
    audits.scrub = position;
    for (auto const& finding : finished->findings) {
        services_.log->error(name_, "scrub: the mirror's data file no longer matches its ledger: " + finding.message);
        if (audits.scrub_findings.size() < audit_record::max_findings)
            audits.scrub_findings.push_back(finding.message);
    }
    if (finished->failure)
        services_.log->warning(name_, "scrub step stopped (it goes on from there next time): " + finished->failure->message);
    if (finished->round_completed)
        services_.log->info(name_, "scrub: round complete; every data file of the mirror checked against its ledger" +
                                       std::string(audits.scrub_findings.empty() ? "" : ", with findings (see status)"));
    if (services_.log->enabled(config::log_level::debug))
        services_.log->debug(name_, "scrub step: " + std::to_string(finished->files) + " data file(s), " +
                                        std::to_string(finished->bytes) + " bytes checked; " +
                                        std::to_string(audits.scrub.round_bytes) + " of " +
                                        std::to_string(finished->ledger_bytes) + " bytes this round");
    services_.stats->scrub_step(name_, *finished, audits);
    // A round that found nothing clears the findings of the one before it.
    if (finished->round_completed && finished->findings.empty() && !finished->failure)
        audits.scrub_findings.clear();
    save_state();
}

awaitable<void> repository_job::origin_check(config::repository_config const& r) {
    auto& audits = state_.record.audits;
    double const started = record_now();
    auto finished = co_await run_cuttable(
        sync::check_origin_data(*origin_, *mirror_, r.settings.concurrency, services_.transfers.get(), audit_memory()));
    if (retired_)
        co_return;
    audits.next_origin_check = record_time(record_now() + seconds(r.settings.origin_check_interval));
    if (!finished) {
        services_.log->warning(name_, "origin check cut: " +
                                          (cut_reason_.empty() ? std::string("internal error") : cut_reason_));
        co_return;
    }
    for (auto const& violation : finished->violations)
        services_.log->error(name_, "immutability violation: " + violation.message);
    if (finished->failure) {
        services_.log->warning(name_, "origin check stopped: " + finished->failure->message);
    } else {
        audits.last_origin_check = started;
        services_.log->info(name_, "origin check: " + std::to_string(finished->files) + " data file(s) compared, " +
                                       std::to_string(finished->violations.size()) + " violation(s)");
    }
    services_.stats->origin_check(name_, *finished, audits);
    // Known until a complete check no longer finds them: FdlMirrorImmutabilityViolation.
    record_origin_check(state_.record, finished->violations, record_now(), !finished->failure);
    services_.stats->set_clocks(name_, state_.record);
    save_state();
}

} // namespace mirror::daemon
