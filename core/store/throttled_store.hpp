#pragma once
// Polite mirroring of public hosts: a store decorator that paces requests and bytes so a
// store is never asked more than its configured rates (issue 5, "a per-origin
// request-rate limit and a bandwidth limit").

#include "core/store/store.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

namespace mirror::store {

/// Rates for one store or endpoint; an absent rate is unlimited.
struct rate_limits {
    std::optional<double> requests_per_second; ///< > 0
    std::optional<std::uint64_t> bytes_per_second; ///< > 0; bytes read and written
    bool any() const { return requests_per_second || bytes_per_second; }
};

/// A pure pacing clock (the generic cell rate algorithm): `delay_for` books `units` at
/// `rate` per second and says how long the caller must wait before using them. Up to one
/// second's worth (at least one unit) may go at once after an idle spell; past that, use
/// is spread evenly. Deterministic: the caller passes the time.
class pacer {
public:
    using clock = std::chrono::steady_clock;
    explicit pacer(double per_second);
    clock::duration delay_for(double units, clock::time_point now);

private:
    double per_second_;
    clock::duration burst_;
    clock::time_point booked_until_{}; ///< when everything booked so far has been paid for
};

/// Limits shared by every store opened with them (e.g. all the repositories on one
/// endpoint). Used from the I/O thread only.
class throttle {
public:
    explicit throttle(rate_limits limits);
    rate_limits const& limits() const { return limits_; }
    /// Waits until one more request may be sent.
    awaitable<void> request();
    /// Waits until `count` more bytes may move.
    awaitable<void> bytes(std::size_t count);

private:
    rate_limits limits_;
    std::optional<pacer> requests_;
    std::optional<pacer> bytes_;
};

/// Wraps `inner` so that every operation (stat, read, list, open_writer, commit, remove)
/// first waits for a request slot of `limits`, and every chunk read or written waits for
/// its bytes. Caps and describe() are the inner store's. Retries inside a backend are
/// paced by its own backoff, not counted again.
std::unique_ptr<store> throttled(std::unique_ptr<store> inner, std::shared_ptr<throttle> limits);

} // namespace mirror::store
