#include "daemon/service/on_call.hpp"

#include "daemon/service/repository_job.hpp"
#include "daemon/state/pass_record.hpp"
#include "daemon/status/status_report.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/json.hpp>

#include <chrono>

namespace mirror::daemon {

namespace json = boost::json;

namespace {

/// One repository's trigger, as it stands.
struct triggered {
    std::string name;
    repository_job::trigger_result asked = repository_job::trigger_result::starting;
    json::object answer; ///< filled once it is known
};

/// What became of a pass asked to start at `asked` (unix seconds); empty while unknown.
json::object outcome(repository_job const* job, double asked) {
    if (job == nullptr)
        return {{"result", "removed"}, {"detail", "no longer in the configuration (a reload removed it)"}};
    auto const status = job->status();
    if (status.state.last_attempt && *status.state.last_attempt >= asked)
        return {{"result", "started"}, {"pass_started_at", utc_time(*status.state.last_attempt)}};
    if (job->waiting() && status.state.paused)
        return {{"result", "paused"},
                {"detail", "paused" + (status.state.paused->by.empty() ? std::string() : " by " + status.state.paused->by) +
                               ": no pass runs until `fdl-mirror resume`"}};
    if (job->waiting() && !status.standing_by.empty())
        return {{"result", "standing_by"},
                {"detail", status.standing_by + "; that daemon mirrors it (trigger it there)"}};
    return {};
}

} // namespace

control_answer refused_control(unsigned status, std::string why) {
    return {status, json::serialize(json::object{{"error", std::move(why)}}) + "\n"};
}

awaitable<control_answer> trigger_passes(std::vector<std::string> names,
                                         std::function<repository_job*(std::string const&)> find,
                                         std::chrono::milliseconds patience) {
    double const asked = record_now(); // as a pass's last_attempt is taken (to the millisecond)
    std::vector<triggered> all;
    for (auto& name : names) {
        triggered one{std::move(name)};
        auto* job = find(one.name);
        if (job == nullptr) {
            one.answer = outcome(nullptr, asked);
        } else {
            one.asked = job->trigger("POST /trigger");
            if (one.asked == repository_job::trigger_result::stopping) {
                one.answer = {{"result", "stopping"}, {"detail", "the daemon stops: no pass starts"}};
            } else if (one.asked == repository_job::trigger_result::queued) {
                one.answer = {{"result", "queued"},
                              {"detail", "a pass or the wait for a pass slot is in hand: the next pass starts "
                                         "right after it"}};
                if (auto const since = job->status().state.last_attempt; since && job->in_pass())
                    one.answer["running_since"] = utc_time(*since);
            }
        }
        all.push_back(std::move(one));
    }
    // The passes start on this thread, while this waits: look every 50 ms.
    net::steady_timer tick(co_await net::this_coro::executor);
    auto const until = std::chrono::steady_clock::now() + patience;
    for (;;) {
        tick.expires_after(std::chrono::milliseconds(50)); // first, so that the jobs wake
        co_await tick.async_wait(use_op);
        bool unknown = false;
        for (auto& one : all)
            if (one.answer.empty()) {
                one.answer = outcome(find(one.name), asked);
                unknown = unknown || one.answer.empty();
            }
        if (!unknown || std::chrono::steady_clock::now() >= until)
            break;
    }
    json::array out;
    for (auto& one : all) {
        if (one.answer.empty())
            one.answer = {{"result", "requested"},
                          {"detail", "not started yet: waiting for one of the max_passes pass slots, or for the "
                                     "lease"}};
        json::object entry{{"repository", one.name}};
        for (auto& [key, value] : one.answer)
            entry.emplace(key, std::move(value));
        out.push_back(std::move(entry));
    }
    co_return control_answer{200, json::serialize(json::object{{"repositories", std::move(out)}}) + "\n"};
}

} // namespace mirror::daemon
