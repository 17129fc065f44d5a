#include "core/coord/membership.hpp"

#include "core/fdl/json_fields.hpp"
#include "core/io/errors.hpp"

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>

namespace mirror::coord {

namespace {

constexpr std::size_t most_heartbeat_bytes = 4096;
constexpr std::size_t most_members = 1000; // a listing past this is not a fleet of daemons

std::string render(heartbeat const& beat) {
    boost::json::object out;
    out["instance"] = beat.instance;
    out["holder"] = beat.holder;
    out["expires"] = beat.expires;
    return boost::json::serialize(out) + "\n";
}

result<heartbeat> parse(std::string_view text, std::string const& where) {
    auto value = fdl::parse_json(text, where);
    if (!value)
        return value.error();
    auto fields = fdl::object_fields::top(*value, where);
    if (!fields)
        return fields.error();
    heartbeat beat;
    std::uint64_t expires = 0;
    fdl::field_reader read(*fields);
    if (auto ok = read.string("instance", beat.instance).string("holder", beat.holder).count("expires", expires).done();
        !ok)
        return ok.error();
    beat.expires = static_cast<std::int64_t>(expires);
    return beat;
}

} // namespace

awaitable<result<void>> publish(store::store& members, heartbeat beat) {
    std::string key = beat.instance + ".json";
    co_return co_await store::write_all(members, std::move(key), render(beat), store::write_mode::replace);
}

awaitable<result<void>> withdraw(store::store& members, std::string instance) {
    auto removed = co_await members.remove(instance + ".json");
    if (!removed && removed.error().code != io::store_errc::not_found)
        co_return removed.error();
    co_return result<void>();
}

awaitable<result<std::vector<heartbeat>>> live_members(store::store& members, std::int64_t now_ms,
                                                        std::int64_t skew_ms) {
    std::vector<std::string> keys;
    auto listed = co_await members.list("", [&](store::list_entry entry) -> result<void> {
        if (entry.key.ends_with(".json") && entry.key.find('/') == std::string::npos && keys.size() < most_members)
            keys.push_back(std::move(entry.key));
        return {};
    });
    if (!listed)
        co_return listed.error();
    std::vector<heartbeat> live;
    for (auto const& key : keys) {
        auto bytes = co_await store::read_all(members, key, most_heartbeat_bytes);
        if (!bytes)
            continue; // gone since the listing, or unreadable: no member
        auto beat = parse(*bytes, members.describe() + key);
        if (!beat || beat->instance + ".json" != key || beat->expires + skew_ms < now_ms)
            continue;
        live.push_back(std::move(*beat));
    }
    std::sort(live.begin(), live.end(), [](auto const& a, auto const& b) { return a.instance < b.instance; });
    co_return live;
}

} // namespace mirror::coord
