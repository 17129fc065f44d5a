// What asks a repository job for a pass before its interval is out: the on-call's
// trigger, a poll asked for by a reload, and events (webhooks and S3 notifications),
// which are coalesced and rate-limited by events.min_pass_gap (docs/events.md).

#include "daemon/service/repository_job.hpp"

namespace mirror::daemon {

void repository_job::poll_now(std::string const& why) {
    if (in_pass_ || stopping_)
        return;
    services_.log->info(name_, "polling now: " + why);
    wait_.cancel();
}

repository_job::trigger_result repository_job::event_arrived(std::string const& source) {
    state_.record.last_event = record_now(); // saved with the pass it starts
    services_.stats->set_event_clocks(name_, repo().events.any(), *state_.record.last_event,
                                      state_.record.unannounced_change.value_or(0));
    if (stopping_)
        return trigger_result::stopping;
    // One pass pending for events at most: more events add nothing to it (issue 45: a
    // sender's flood of authentic events ran passes back to back and filled the log).
    if (event_asked_ && (trigger_pending_ || event_not_before_)) {
        services_.stats->event_coalesced(name_);
        return trigger_result::queued;
    }
    event_asked_ = true;
    auto const gap = cfg_->events ? cfg_->events->min_pass_gap : std::chrono::milliseconds(0);
    auto const now = std::chrono::steady_clock::now();
    if (last_event_pass_ && now < *last_event_pass_ + gap) {
        event_not_before_ = *last_event_pass_ + gap;
        services_.log->info(name_, "pass asked for by " + std::string(source == "s3" ? "an S3 notification" : "a webhook") +
                                       ": it starts when events.min_pass_gap has passed since the last one");
        if (waiting_)
            wait_.cancel(); // the loop waits for the gap instead
        else
            trigger_pending_ = true;
        return trigger_result::queued;
    }
    return trigger(source == "s3" ? "an S3 notification" : "a webhook");
}

repository_job::trigger_result repository_job::trigger(std::string const& who) {
    if (stopping_)
        return trigger_result::stopping;
    if (waiting_) {
        services_.log->info(name_, "pass triggered by " + who + ": it starts now");
        wait_.cancel();
        return trigger_result::starting;
    }
    services_.log->info(name_, "pass triggered by " + who + ": it starts when the one in hand ends");
    trigger_pending_ = true;
    return trigger_result::queued;
}

void repository_job::cancel_pass(std::string why) {
    if (!in_pass_)
        return;
    cut_reason_ = std::move(why);
    cut_.emit(net::cancellation_type::terminal);
}

} // namespace mirror::daemon
