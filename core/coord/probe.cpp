#include "core/coord/probe.hpp"

#include "core/fdl/json_fields.hpp"
#include "core/io/errors.hpp"

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cstdint>

namespace mirror::coord {

namespace {
/// A tag of the same form that is not `tag` (a server might compare only so many bytes).
std::string wrong_tag(std::string tag) {
    if (tag.empty())
        return "0";
    tag[0] = tag[0] == '0' ? '1' : '0';
    return tag;
}
} // namespace

awaitable<result<bool>> honours_conditional_writes(store::store& mirror, std::string key) {
    if (!mirror.caps().conditional_writes)
        co_return false;
    if (auto gone = co_await mirror.remove(key); !gone && gone.error().code != io::store_errc::not_found)
        co_return gone.error();
    auto first = co_await mirror.write_conditional(key, "probe 1\n", std::nullopt);
    if (!first)
        co_return first.error();
    bool honoured = true;
    auto lost = [&](result<std::string> const& write) -> result<bool> {
        if (write)
            return false; // stored when it should have lost
        if (write.error().code == io::store_errc::conflict)
            return true;
        return write.error();
    };
    for (auto const& if_tag : {std::optional<std::string>(), std::optional<std::string>(wrong_tag(*first))}) {
        auto write = lost(co_await mirror.write_conditional(key, "probe 2\n", if_tag));
        if (!write)
            co_return write.error();
        honoured = honoured && *write;
    }
    if (honoured) { // the right tag wins: the form of the tag sent is one the server matches
        auto second = co_await mirror.write_conditional(key, "probe 3\n", *first);
        if (!second && second.error().code != io::store_errc::conflict)
            co_return second.error();
        honoured = second.has_value();
    }
    if (auto gone = co_await mirror.remove(key); !gone && gone.error().code != io::store_errc::not_found)
        co_return gone.error();
    co_return honoured;
}

std::string render_probe_record(probe_record const& record) {
    boost::json::object out;
    out["server"] = record.server;
    out["honours_conditional_writes"] = record.honoured;
    out["probed_at_ms"] = record.probed_at_ms;
    return boost::json::serialize(out) + "\n";
}

result<probe_record> parse_probe_record(std::string_view text, std::string const& where) {
    auto value = fdl::parse_json(text, where);
    if (!value)
        return value.error();
    auto fields = fdl::object_fields::top(*value, where);
    if (!fields)
        return fields.error();
    probe_record record;
    std::optional<bool> honoured;
    std::uint64_t probed_at = 0;
    fdl::field_reader read(*fields);
    read.string("server", record.server).optional_bool("honours_conditional_writes", honoured).count("probed_at_ms", probed_at);
    if (auto ok = read.done(); !ok)
        return ok.error();
    if (!honoured)
        return fields->fail(fdl::fdl_errc::missing_field, "honours_conditional_writes", "missing");
    record.honoured = *honoured;
    record.probed_at_ms = static_cast<std::int64_t>(std::min<std::uint64_t>(probed_at, INT64_MAX));
    return record;
}

awaitable<result<bool>> honours_conditional_writes_remembered(store::store& mirror, std::string probe_key,
                                                              std::chrono::system_clock::time_point now,
                                                              std::chrono::hours remember_for) {
    if (!mirror.caps().conditional_writes)
        co_return false;
    std::string const key(probe_record_key);
    auto const now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
    auto kept = co_await store::read_if_present(mirror, key, 4096);
    if (kept && *kept) {
        auto record = parse_probe_record(**kept, mirror.describe() + key);
        auto const age_ms = record ? now_ms - record->probed_at_ms : -1;
        if (record && record->server == mirror.server() && age_ms >= 0 &&
            age_ms < std::chrono::duration_cast<std::chrono::milliseconds>(remember_for).count())
            co_return record->honoured;
    }
    auto honoured = co_await honours_conditional_writes(mirror, std::move(probe_key));
    if (honoured) { // a record not written costs only the next run's probe
        probe_record const answer{mirror.server(), *honoured, now_ms}; // named: g++ 12 and braced temporaries
        co_await store::write_all(mirror, key, render_probe_record(answer), store::write_mode::replace);
    }
    co_return honoured;
}

} // namespace mirror::coord
