#include "daemon/metrics/metrics.hpp"

#include "daemon/metrics/detail/metrics_impl.hpp"

#include "daemon/metrics/metric_series.hpp"

#include "core/sync/origin_data_check.hpp"
#include "core/sync/scrub.hpp"
#include "daemon/state/pass_record.hpp"
#include "daemon/metrics/process_metrics.hpp"
#include "daemon/metrics/request_counts.hpp"

#include "core/sync/errors.hpp"
#include "verify/errors.hpp"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace mirror::daemon {

char const* to_string(pass_outcome outcome) noexcept {
    switch (outcome) {
    case pass_outcome::ok: return "ok";
    case pass_outcome::failed: return "failed";
    case pass_outcome::held: return "held";
    case pass_outcome::timeout: return "timeout";
    }
    return "failed";
}

namespace {
using prometheus::Counter;
using prometheus::Family;
using prometheus::Gauge;
using prometheus::Histogram;
using prometheus::Labels;

} // namespace

metrics::metrics(build_facts facts) : impl_(std::make_unique<impl>()) {
    impl_->build_info
        .Add({{"version", facts.version},
              {"libssh", facts.libssh},
              {"duckdb", facts.duckdb ? "yes" : "no"},
              {"openssl", facts.openssl}})
        .Set(1);
    impl_->sample_process();
    impl_->reload_success.Set(1); // the configuration in force is the file's, as read at start
}

void metrics::reload_finished(bool applied, double when) {
    impl_->reload_success.Set(applied ? 1 : 0);
    impl_->reload_time.Set(when);
}

metrics::~metrics() = default;

void metrics::set_repositories(std::vector<repository_info> const& repositories) {
    std::set<std::string> wanted;
    for (auto const& repo : repositories) {
        wanted.insert(repo.name);
        auto known = impl_->intervals.find(repo.name);
        if (known == impl_->intervals.end())
            impl_->create(repo.name, repo.interval_seconds);
        else if (known->second != repo.interval_seconds) // a reload keeps counters, updates the interval
            impl_->interval.Add({{"repo", repo.name}}).Set(repo.interval_seconds);
        impl_->intervals[repo.name] = repo.interval_seconds;
        impl_->scrub_period.Add({{"repo", repo.name}}).Set(repo.scrub_period_seconds);
    }
    for (auto it = impl_->intervals.begin(); it != impl_->intervals.end();) {
        if (wanted.contains(it->first)) {
            ++it;
            continue;
        }
        impl_->forget(it->first);
        it = impl_->intervals.erase(it);
    }
    impl_->repository_count.Set(static_cast<double>(repositories.size()));
}

void metrics::lease_changed(std::string const& repo, lease_event event) {
    if (!impl_->intervals.contains(repo))
        return; // removed by a reload meanwhile
    Labels r{{"repo", repo}};
    switch (event) {
    case lease_event::taken_over: impl_->lease_takeovers.Add(r).Increment(); [[fallthrough]];
    case lease_event::held: impl_->lease_held.Add(r).Set(1); break;
    case lease_event::lost: impl_->leases_lost.Add(r).Increment(); [[fallthrough]];
    case lease_event::not_held: impl_->lease_held.Add(r).Set(0); break;
    }
}

void metrics::standing_by(std::string const& repo) {
    if (impl_->intervals.contains(repo)) // else removed by a reload meanwhile
        impl_->standing_by(repo);
}

void metrics::set_paused(std::string const& repo, bool paused) {
    if (impl_->intervals.contains(repo)) // else removed by a reload meanwhile
        impl_->paused.Add({{"repo", repo}}).Set(paused ? 1 : 0);
}

void metrics::attestation_written(std::string const& repo, double attested_at, double expires, double interval,
                                  double validity) {
    if (!impl_->intervals.contains(repo)) // removed by a reload meanwhile
        return;
    impl::Labels r{{"repo", repo}};
    impl_->attestation_time.Add(r).Set(attested_at);
    impl_->attestation_expires.Add(r).Set(expires);
    impl_->attestation_interval.Add(r).Set(interval);
    impl_->attestation_validity.Add(r).Set(validity);
}

void metrics::peers_compared(std::string const& repo, std::vector<peer_result> const& peers, std::uint32_t max_lag,
                             double when) {
    if (!impl_->intervals.contains(repo)) // removed by a reload meanwhile
        return;
    std::set<std::string> keep;
    for (auto const& p : peers)
        keep.insert(p.peer);
    impl_->remove_peers(repo, keep);
    for (auto const& p : peers) {
        impl::Labels labels{{"repo", repo}, {"peer", p.peer}};
        impl_->peer_up.Add(labels).Set(p.up ? 1 : 0);
        if (p.up) { // what could not be read keeps its last values
            impl_->peer_divergence.Add(labels).Set(static_cast<double>(p.divergences));
            impl_->peer_behind.Add(labels).Set(static_cast<double>(p.behind));
        }
    }
    impl_->peer_max_lag.Add({{"repo", repo}}).Set(max_lag);
    impl_->peers_compared_at.Add({{"repo", repo}}).Set(when);
}

void metrics::attestation_failed(std::string const& repo) {
    if (impl_->intervals.contains(repo)) // else removed by a reload meanwhile
        impl_->attestation_failures.Add({{"repo", repo}}).Increment();
}

void metrics::lease_anomaly(std::string const& repo, bool found) {
    if (impl_->intervals.contains(repo)) // else removed by a reload meanwhile
        impl_->lease_anomaly.Add({{"repo", repo}}).Set(found ? 1 : 0);
}

void metrics::set_transfer_memory(std::uint64_t limit, std::uint64_t in_use, std::uint64_t peak, std::size_t waiting) {
    impl_->memory_limit.Set(static_cast<double>(limit));
    impl_->memory_in_use.Set(static_cast<double>(in_use));
    impl_->memory_peak.Set(static_cast<double>(peak));
    impl_->memory_waiting.Set(static_cast<double>(waiting));
}

void metrics::set_catalog_reads(std::uint64_t catalogs, std::uint64_t batches) {
    // Counters only go up: the totals are the process's, which never go down either.
    if (catalogs > impl_->catalog_reads_seen)
        impl_->catalog_reads.Increment(static_cast<double>(catalogs - impl_->catalog_reads_seen));
    if (batches > impl_->catalog_batches_seen)
        impl_->catalog_batches.Increment(static_cast<double>(batches - impl_->catalog_batches_seen));
    impl_->catalog_reads_seen = std::max(impl_->catalog_reads_seen, catalogs);
    impl_->catalog_batches_seen = std::max(impl_->catalog_batches_seen, batches);
}

void metrics::set_catalog_readers(catalog_reader_totals totals) {
    auto advance = [](Counter& counter, std::uint64_t now, std::uint64_t& seen) {
        if (now > seen)
            counter.Increment(static_cast<double>(now - seen));
        seen = std::max(seen, now);
    };
    advance(impl_->readers_crashed, totals.crashed, impl_->readers_seen.crashed);
    advance(impl_->readers_limited, totals.limited, impl_->readers_seen.limited);
    advance(impl_->readers_started, totals.started, impl_->readers_seen.started);
}

void metrics::set_passes(std::size_t running, std::size_t waiting, std::size_t max) {
    impl_->passes_running.Set(static_cast<double>(running));
    impl_->passes_waiting.Set(static_cast<double>(waiting));
    impl_->max_passes.Set(static_cast<double>(max));
}

void metrics::set_members(std::size_t live) { impl_->members.Set(static_cast<double>(live)); }

std::shared_ptr<io::request_observer> metrics::request_observer(std::string const& repo,
                                                                   std::string const& store_role) {
    auto& counted = impl_->traffic[repo];
    if (!counted)
        counted = std::make_shared<repo_traffic>(impl_->requests, impl_->request_errors, repo);
    return std::make_shared<traffic_observer>(counted, store_role);
}

std::string metrics::text() const {
    impl_->sample_process();
    std::ostringstream out;
    prometheus::TextSerializer().Serialize(out, impl_->registry->Collect());
    return out.str();
}

} // namespace mirror::daemon
