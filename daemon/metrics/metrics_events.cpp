// The metrics of passes driven by events (daemon/events/): what came, what was refused and
// why, what started passes, and the two clocks FdlMirrorEventsMissing compares.

#include "daemon/metrics/detail/metrics_impl.hpp"

namespace mirror::daemon {

void metrics::event_received(std::string const& source) { impl_->events_received.Add({{"source", source}}).Increment(); }

void metrics::event_refused(std::string const& source, std::string const& reason) {
    impl_->events_refused.Add({{"source", source}, {"reason", reason}}).Increment();
}

void metrics::events_ignored(std::string const& source, std::size_t records) {
    impl_->events_ignored.Add({{"source", source}}).Increment(static_cast<double>(records));
}

void metrics::event_accepted(std::string const& repo, std::string const& source) {
    if (impl_->intervals.contains(repo)) // else removed by a reload meanwhile
        impl_->events_accepted.Add({{"repo", repo}, {"source", source}}).Increment();
}

void metrics::set_event_clocks(std::string const& repo, bool expected, double last_event, double unannounced_change) {
    if (!impl_->intervals.contains(repo))
        return;
    impl::Labels r{{"repo", repo}};
    if (!expected) { // not (or no longer) taking events: nothing for the rules to watch
        for (auto* family : {&impl_->events_expected, &impl_->last_event, &impl_->unannounced_change})
            impl::remove_repo(*family, repo, {r});
        return;
    }
    impl_->events_expected.Add(r).Set(1);
    impl_->last_event.Add(r).Set(last_event);
    impl_->unannounced_change.Add(r).Set(unannounced_change);
    impl_->passes_by_events.Add(r); // at 0, for increase()
    impl_->events_coalesced.Add(r);
}

void metrics::pass_by_event(std::string const& repo) {
    if (impl_->intervals.contains(repo))
        impl_->passes_by_events.Add({{"repo", repo}}).Increment();
}

void metrics::event_coalesced(std::string const& repo) {
    if (impl_->intervals.contains(repo))
        impl_->events_coalesced.Add({{"repo", repo}}).Increment();
}

void metrics::change_unannounced(std::string const& repo, double started) {
    if (impl_->intervals.contains(repo) && impl_->events_expected.Has({{"repo", repo}}))
        impl_->unannounced_change.Add({{"repo", repo}}).Set(started);
}

} // namespace mirror::daemon
