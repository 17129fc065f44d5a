#include "daemon/metrics/request_counts.hpp"

#include <algorithm>

namespace mirror::daemon {

void repo_traffic::count(std::string const& role, io::request_event const& event) {
    if (requests_ == nullptr)
        return; // the repository is gone
    if (event.status != 0) {
        auto it = std::find_if(by_code_.begin(), by_code_.end(), [&](code_child const& c) {
            return c.status == event.status && c.method == event.method && c.store == role;
        });
        if (it == by_code_.end()) {
            std::string method(event.method);
            auto& made = requests_->Add(
                {{"repo", repo_}, {"store", role}, {"method", method}, {"code", std::to_string(event.status)}});
            it = by_code_.insert(by_code_.end(), {role, std::move(method), event.status, &made});
        }
        it->counter->Increment();
    }
    if (event.failure != io::request_failure::none) {
        auto it = std::find_if(by_kind_.begin(), by_kind_.end(),
                               [&](kind_child const& c) { return c.kind == event.failure && c.store == role; });
        if (it == by_kind_.end()) {
            auto& made = errors_->Add({{"repo", repo_}, {"store", role}, {"kind", io::to_string(event.failure)}});
            it = by_kind_.insert(by_kind_.end(), {role, event.failure, &made});
        }
        it->counter->Increment();
    }
}

void repo_traffic::remove_series() {
    for (auto const& c : by_code_)
        requests_->Remove(c.counter);
    for (auto const& c : by_kind_)
        errors_->Remove(c.counter);
    cut_loose();
}

} // namespace mirror::daemon
