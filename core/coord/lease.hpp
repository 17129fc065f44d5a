#pragma once
// A repository's lease: the one object in its mirror (`.fdl-mirror/lease`) that says which
// daemon may write the repository, until when, and under which fencing token. Taken with
// `If-None-Match: *`, renewed, released and taken over with `If-Match` on the tag read, so
// the store's own conditional writes decide every race (no consensus of our own).
//
// Time: the holder counts its lease on its own boot-time clock from the instant before it
// asked (pauses of the process count, as do suspends of the host); others count it on
// their wall clocks from the expiry written in the object, plus `max_clock_skew`. So
// while clocks differ by less than that, a holder's lease ends, in real time, before
// anyone else may take it over.

#include "core/io/net.hpp"
#include "core/store/store.hpp"
#include "verify/error.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace mirror::coord {

using std::chrono::milliseconds;

struct lease_settings {
    std::string key = ".fdl-mirror/lease";
    milliseconds duration{60'000};      ///< how long a lease lasts after each renewal
    milliseconds max_clock_skew{5'000}; ///< the most two hosts' wall clocks may differ
    /// The longest another holder's idle lease (rest()) may stay unrenewed before it is
    /// taken as expired, whatever it claims: its holder's longest wait between passes plus
    /// a lease. 0: as long as an active lease.
    milliseconds idle_patience{0};
    /// Whether the daemon INSTANCE is known to have stopped (its heartbeat ran out): its
    /// idle lease is then free at once. Null, or false, when nothing is known.
    std::function<bool(std::string_view instance)> holder_gone;
};

/// The lease object's contents (JSON).
struct lease_record {
    std::string holder;       ///< "INSTANCE/LIFE": the daemon and this run of it
    std::uint64_t token = 0;  ///< the fencing token: grows by one with each new holder
    std::int64_t expires = 0; ///< unix milliseconds on the holder's clock; 0: released
    std::int64_t since = 0;   ///< when this holder took it (unix milliseconds)
    /// Between its holder's passes: nothing is written under it, and its holder claims the
    /// next pass until `expires` (see lease::rest).
    bool idle = false;
    bool operator==(lease_record const&) const = default;
};
std::string render_lease(lease_record const& record);
/// `where` names the object in messages.
result<lease_record> parse_lease(std::string_view text, std::string const& where);

/// The clocks a lease reads; tests drive them.
struct lease_clock {
    std::function<std::int64_t()> wall_ms;    ///< unix milliseconds
    std::function<std::int64_t()> elapsed_ms; ///< a clock that never goes back and counts pauses
    static lease_clock system();
};

enum class lease_change {
    taken,       ///< it was free, released or expired: now held, under a new token
    renewed,     ///< held, and now for another `duration`
    held_by_other,
    lost,        ///< held until now; another holder has it (it expired here, or a write lost)
    released,
};

class lease {
public:
    lease(store::store& mirror, std::string holder, lease_settings settings, lease_clock clock = lease_clock::system());

    /// Renews the lease when held, takes it when free or expired; else says who holds it.
    /// An error (the store unreachable) changes nothing: a held lease stays held until its
    /// time runs out here.
    awaitable<result<lease_change>> acquire_or_renew();
    /// Gives it up (expiry 0, the token kept so that it keeps growing) when held or idle.
    awaitable<result<lease_change>> release();
    /// After a pass: keeps the lease, idle, for `reservation` (the wait until the next pass
    /// and a lease), in one write, so that no request is needed between passes. Nothing may
    /// be written under an idle lease (covers() is false); the next acquire_or_renew() makes
    /// it active again under the same token. Others take it only once it ran out (or its
    /// holder is known gone: lease_settings::holder_gone). `lost` when another holder took
    /// it meanwhile; an error leaves it active in the store until it runs out.
    awaitable<result<lease_change>> rest(milliseconds reservation);

    /// True while held with at least `margin` of it left on this host's clock: a write
    /// that moves something starts only then.
    bool covers(milliseconds margin) const;
    bool held() const { return held_; }
    /// Held, or idle between this holder's passes: this daemon is the repository's mirror.
    bool mine() const { return held_ || idle_; }
    /// Whether the last `taken` was from another holder whose lease had run out (not
    /// released, not free), or whose idle lease was freed by its heartbeat running out.
    bool took_over() const { return took_over_; }
    /// After took_over(): "whose lease ran out", or "whose heartbeat stopped".
    std::string const& takeover_reason() const { return takeover_reason_; }
    /// Whether the last `taken` was from an earlier run of this same instance (same
    /// INSTANCE, another LIFE: a restart after a crash), taken at once without waiting for
    /// its lease to run out.
    bool reclaimed() const { return reclaimed_; }
    /// The holder it was taken over from, after took_over() or reclaimed().
    std::string const& taken_from() const { return taken_from_; }
    std::uint64_t token() const { return mine_.token; }
    /// The lease as last read or written (another holder's, when held_by_other).
    lease_record const& last_seen() const { return seen_; }
    std::string const& holder() const { return holder_; }
    std::string describe() const; ///< "s3://bucket/repo/.fdl-mirror/lease"
    /// What was wrong with the lease as last read, when something was: another holder's
    /// expiry further ahead than lease_duration + max_clock_skew. Empty otherwise. (Any
    /// other holder's lease left unrenewed that long on this host's clock is taken as
    /// expired, whatever its expiry says.)
    std::string const& anomaly() const { return anomaly_; }

private:
    awaitable<result<lease_change>> write(lease_record next, std::optional<std::string> if_tag, lease_change if_won,
                                          std::int64_t asked_at);
    lease_change lose();

    store::store& mirror_;
    std::string holder_;
    lease_settings settings_;
    lease_clock clock_;
    bool held_ = false;
    bool idle_ = false; ///< this holder's, between its passes
    bool took_over_ = false;
    std::string takeover_reason_;
    bool reclaimed_ = false;
    std::string taken_from_;
    lease_record mine_;             ///< what this holder last wrote
    lease_record seen_;             ///< what was last read or written
    std::string tag_;               ///< the store's tag of what this holder last wrote
    std::int64_t valid_until_ = 0;  ///< on clock_.elapsed_ms
    std::string anomaly_;
    std::string observed_tag_;        ///< another holder's lease as last read (its tag)
    std::int64_t observed_since_ = 0; ///< when it was first read so, on clock_.elapsed_ms
};

} // namespace mirror::coord
