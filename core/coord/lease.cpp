#include "core/coord/lease.hpp"

#include <limits>
#include <optional>

#include "core/fdl/json_fields.hpp"
#include "core/io/errors.hpp"
#include "core/io/text.hpp"

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <time.h>

namespace mirror::coord {

namespace {
constexpr std::size_t most_lease_bytes = 4096; // a record is about 150 bytes
}

std::string render_lease(lease_record const& record) {
    boost::json::object out;
    out["holder"] = record.holder;
    out["token"] = record.token;
    out["expires"] = record.expires;
    out["since"] = record.since;
    if (record.idle)
        out["idle"] = true;
    return boost::json::serialize(out) + "\n";
}

result<lease_record> parse_lease(std::string_view text, std::string const& where) {
    auto value = fdl::parse_json(text, where);
    if (!value)
        return value.error();
    auto fields = fdl::object_fields::top(*value, where);
    if (!fields)
        return fields.error();
    lease_record record;
    std::uint64_t expires = 0, since = 0;
    std::optional<bool> idle;
    fdl::field_reader read(*fields);
    read.string("holder", record.holder).count("token", record.token).count("expires", expires).count("since", since);
    read.optional_bool("idle", idle);
    if (auto ok = read.done(); !ok)
        return ok.error();
    record.expires = static_cast<std::int64_t>(expires);
    record.since = static_cast<std::int64_t>(since);
    record.idle = idle.value_or(false);
    return record;
}

lease_clock lease_clock::system() {
    return {[] {
                return std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch())
                    .count();
            },
            [] {
                // CLOCK_BOOTTIME goes on while the process is stopped and the host suspended:
                // a lease held across a pause is known to be over when the pause ends.
                timespec now{};
                ::clock_gettime(CLOCK_BOOTTIME, &now);
                return static_cast<std::int64_t>(now.tv_sec) * 1000 + now.tv_nsec / 1'000'000;
            }};
}

namespace {

/// "alpha" of the holder "alpha/3f2c…": the daemon, whatever its run.
std::string_view instance_of(std::string_view holder) { return holder.substr(0, holder.find('/')); }

} // namespace

lease::lease(store::store& mirror, std::string holder, lease_settings settings, lease_clock clock)
    : mirror_(mirror), holder_(std::move(holder)), settings_(std::move(settings)), clock_(std::move(clock)) {}

std::string lease::describe() const { return mirror_.describe() + settings_.key; }

bool lease::covers(milliseconds margin) const {
    return held_ && clock_.elapsed_ms() + margin.count() <= valid_until_;
}

lease_change lease::lose() {
    bool const was_mine = held_ || idle_;
    held_ = idle_ = false;
    return was_mine ? lease_change::lost : lease_change::held_by_other;
}

awaitable<result<lease_change>> lease::acquire_or_renew() {
    // Counted from before the request: its time in flight is the holder's loss.
    std::int64_t const asked_at = clock_.elapsed_ms();
    std::int64_t const now = clock_.wall_ms();
    auto there = co_await mirror_.read_tagged(settings_.key, most_lease_bytes);
    if (!there && there.error().code != io::store_errc::not_found)
        co_return there.error();
    lease_record next{holder_, 1, now + settings_.duration.count(), now};
    took_over_ = reclaimed_ = false;
    anomaly_.clear(); // judged anew on each read: our own lease, or none, has none
    if (!there) // never taken here: the first token
        co_return co_await write(next, std::nullopt, lease_change::taken, asked_at);
    auto current = parse_lease(there->bytes, describe());
    if (!current)
        co_return make_error(io::store_errc::rejected,
                             current.error().message + " (delete the object to let the daemons take it afresh)");
    seen_ = *current;
    if (current->holder == holder_) { // ours: no one held it since, so the token stays
        next.token = current->token;
        next.since = current->since;
        bool const ours_already = held_ || idle_; // renewed, or active again after a rest
        co_return co_await write(next, there->tag, ours_already ? lease_change::renewed : lease_change::taken,
                                 asked_at);
    }
    // An honest holder rewrites its lease every sixth of the duration. One that stays as it
    // is for longer than duration + skew on this host's own clock is not held, whatever
    // expiry it claims: a forged one years ahead, or a holder whose clock runs far ahead,
    // would otherwise keep every daemon out. Judged on this host's monotonic clock, never by
    // comparing wall clocks (this one could be the wrong one).
    // An idle lease stays as it is between its holder's passes: its patience is that wait.
    std::int64_t const patience =
        (current->idle && settings_.idle_patience.count() > 0 ? settings_.idle_patience : settings_.duration).count() +
        settings_.max_clock_skew.count();
    if (there->tag != observed_tag_) {
        observed_tag_ = there->tag;
        observed_since_ = asked_at;
    }
    bool const unrenewed = asked_at - observed_since_ > patience;
    if (current->expires > now + patience)
        anomaly_ = describe() + ": " + std::string(io::utf8_prefix(current->holder, 100)) + "'s lease claims " +
                   std::to_string((current->expires - now) / 1000) + " s more, more than " +
                   (current->idle ? "its longest wait between passes, lease_duration" : "lease_duration") +
                   " and max_clock_skew allow: " +
                   (unrenewed ? std::string("not renewed since, so taken as expired")
                              : "taken as expired unless renewed within " + std::to_string(patience / 1000) + " s");
    // An earlier run of this very instance (same INSTANCE, another LIFE) is dead: this one
    // replaced it (a restart after kill -9, a crash). Waiting out its lease would leave the
    // repository unmirrored for a lease's time; the token still grows, so a write of that
    // run (were it somehow alive) is fenced off.
    bool const earlier_life = instance_of(current->holder) == instance_of(holder_);
    // An idle holder writes nothing until it makes its lease active again, which the
    // conditional write of this taker then refuses: a holder known gone need not be waited for.
    bool const gone = current->idle && current->expires != 0 && settings_.holder_gone &&
                      settings_.holder_gone(instance_of(current->holder));
    bool const ran_out = current->expires + settings_.max_clock_skew.count() < now || unrenewed;
    bool const free = current->expires == 0 || ran_out || earlier_life || gone;
    if (!free)
        co_return lose();
    // The token must grow with each holder, or a fenced write of an old holder could pass.
    if (current->token == std::numeric_limits<std::uint64_t>::max())
        co_return make_error(io::store_errc::rejected,
                             describe() + ": the fencing token is at its largest value and cannot grow (delete the "
                                          "object to let the daemons take it afresh)");
    next.token = current->token + 1;
    auto outcome = co_await write(next, there->tag, lease_change::taken, asked_at);
    bool const won = outcome && *outcome == lease_change::taken;
    took_over_ = won && current->expires != 0 && !earlier_life;
    reclaimed_ = won && current->expires != 0 && earlier_life;
    takeover_reason_ = ran_out ? "whose lease ran out" : "whose heartbeat stopped";
    taken_from_ = current->holder;
    co_return outcome;
}

awaitable<result<lease_change>> lease::write(lease_record next, std::optional<std::string> if_tag,
                                             lease_change if_won, std::int64_t asked_at) {
    auto written = co_await mirror_.write_conditional(settings_.key, render_lease(next), std::move(if_tag));
    if (!written && written.error().code == io::store_errc::conflict)
        co_return lose(); // another daemon wrote it first
    if (!written)
        co_return written.error();
    held_ = true;
    idle_ = false;
    mine_ = seen_ = next;
    tag_ = std::move(*written);
    valid_until_ = asked_at + settings_.duration.count();
    co_return if_won;
}

awaitable<result<lease_change>> lease::rest(milliseconds reservation) {
    if (!held_)
        co_return idle_ ? lease_change::renewed : lease_change::released;
    lease_record next = mine_;
    next.expires = clock_.wall_ms() + reservation.count();
    next.idle = true;
    held_ = false; // from here on, nothing more is written under it
    auto written = co_await mirror_.write_conditional(settings_.key, render_lease(next), tag_);
    if (!written && written.error().code == io::store_errc::conflict) {
        idle_ = true; // ours until this write: lost now
        co_return lose();
    }
    idle_ = true; // on failure the store keeps it active until it runs out: still ours
    if (!written)
        co_return written.error();
    mine_ = seen_ = next;
    tag_ = std::move(*written);
    co_return lease_change::renewed;
}

awaitable<result<lease_change>> lease::release() {
    if (!held_ && !idle_)
        co_return lease_change::released;
    lease_record next = mine_;
    next.expires = 0;
    next.idle = false;
    held_ = idle_ = false; // from here on, nothing more is written under it
    auto written = co_await mirror_.write_conditional(settings_.key, render_lease(next), tag_);
    if (!written && written.error().code != io::store_errc::conflict)
        co_return written.error();
    if (written)
        seen_ = next;
    co_return lease_change::released;
}

} // namespace mirror::coord
