#include "core/catalog/detail/query_watchdog.hpp"

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <algorithm>
#include <set>
#include <stop_token>
#include <thread>

namespace mirror::catalog::detail {

/// The process's one watchdog thread, started by the first watched query. The queries it
/// watches are few (one per catalog reader), so a set ordered by deadline is plenty.
class query_watchdog {
public:
    static query_watchdog& instance() {
        static query_watchdog watchdog;
        return watchdog;
    }

    void add(watched_query* query) {
        std::lock_guard lock(mutex_);
        watched_.insert(query);
        ++added_;
        if (!thread_.joinable())
            thread_ = std::jthread([this](std::stop_token stop) { watch(stop); });
        // The thread holds the lock except while it sleeps; one that wakes no later than
        // this deadline sees the query then. Each query of a catalog read has the read's
        // deadline, so most queries wake no one: a wake-up per query cost 3 % of a read.
        if (query->deadline_ < sleeping_until_)
            wake_.notify_one();
    }
    void remove(watched_query* query) {
        std::lock_guard lock(mutex_); // after this, the thread cannot be interrupting it
        watched_.erase(query);
    }
    bool interrupted(watched_query const* query) {
        std::lock_guard lock(mutex_);
        return query->interrupted_;
    }

private:
    struct by_deadline {
        bool operator()(watched_query const* a, watched_query const* b) const {
            return a->deadline_ != b->deadline_ ? a->deadline_ < b->deadline_ : a < b;
        }
    };

    void watch(std::stop_token stop) {
        std::unique_lock lock(mutex_);
        while (!stop.stop_requested()) {
            auto const now = std::chrono::steady_clock::now();
            watched_query* next = nullptr; // the first deadline still ahead
            for (auto* query : watched_) {
                if (query->deadline_ > now) {
                    next = query;
                    break;
                }
                if (!query->interrupted_) {
                    query->interrupted_ = true;
                    duckdb_interrupt(query->connection_);
                }
            }
            // Until that deadline, or until a query is added (its deadline may be sooner).
            auto const seen = added_;
            auto added = [this, seen] { return added_ != seen; };
            if (next == nullptr) {
                sleeping_until_ = std::chrono::steady_clock::time_point::max();
                wake_.wait(lock, stop, added);
            } else {
                // A copy: the query (and its deadline) may end while the lock is released.
                auto const deadline = next->deadline_;
                sleeping_until_ = deadline;
                wake_.wait_until(lock, stop, deadline, added);
            }
        }
    }

    std::mutex mutex_;
    std::condition_variable_any wake_;
    std::set<watched_query*, by_deadline> watched_;
    std::uint64_t added_ = 0; ///< counts add(): wakes the thread for a sooner deadline
    /// When the sleeping thread wakes by itself (max: only when told); the thread is
    /// asleep whenever another holds the lock.
    std::chrono::steady_clock::time_point sleeping_until_ = std::chrono::steady_clock::time_point::max();
    std::jthread thread_; // last member: stopped and joined first
};

watched_query::watched_query(duckdb_connection connection, std::chrono::steady_clock::time_point deadline)
    : connection_(connection), deadline_(deadline) {
    query_watchdog::instance().add(this);
}

watched_query::~watched_query() { query_watchdog::instance().remove(this); }

bool watched_query::interrupted() const { return query_watchdog::instance().interrupted(this); }

} // namespace mirror::catalog::detail
