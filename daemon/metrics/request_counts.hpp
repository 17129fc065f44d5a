#pragma once
// The request counters of the daemon's stores: fdl_mirror_requests_total and
// fdl_mirror_request_errors_total, by repository, store role, method and status or kind.
// Private to metrics.cpp (prometheus-cpp's only user).

#include "core/io/request_observer.hpp"

#include <prometheus/counter.h>
#include <prometheus/family.h>

#include <memory>
#include <string>
#include <vector>

namespace mirror::daemon {

/// The request counters of one repository, shared by the observers of its stores (which
/// the daemon's stores hold, and which may outlive the repository or the metrics). Each
/// label set's child is made once and kept, so that counting a request is a short scan.
class repo_traffic {
public:
    repo_traffic(prometheus::Family<prometheus::Counter>& requests, prometheus::Family<prometheus::Counter>& errors, std::string repo)
        : requests_(&requests), errors_(&errors), repo_(std::move(repo)) {}

    /// An answer counts by its status; a failure (none for most answers) by its kind, so an
    /// answered 503 counts in both, a connection refused only in errors.
    void count(std::string const& role, io::request_event const& event);

    /// Removes every series counted into; counts nothing after.
    void remove_series();

    /// Counts nothing after (the families are going).
    void cut_loose() {
        requests_ = errors_ = nullptr;
        by_code_.clear();
        by_kind_.clear();
    }

private:
    struct code_child {
        std::string store, method;
        unsigned status;
        prometheus::Counter* counter;
    };
    struct kind_child {
        std::string store;
        io::request_failure kind;
        prometheus::Counter* counter;
    };
    prometheus::Family<prometheus::Counter>* requests_;
    prometheus::Family<prometheus::Counter>* errors_;
    std::string repo_;
    std::vector<code_child> by_code_;
    std::vector<kind_child> by_kind_;
};

class traffic_observer final : public io::request_observer {
public:
    traffic_observer(std::shared_ptr<repo_traffic> traffic, std::string role)
        : traffic_(std::move(traffic)), role_(std::move(role)) {}
    void observe(io::request_event const& event) override { traffic_->count(role_, event); }

private:
    std::shared_ptr<repo_traffic> traffic_;
    std::string role_;
};


} // namespace mirror::daemon
