#include "daemon/state/mirror_clocks.hpp"

#include "core/fdl/json_fields.hpp"
#include "core/io/errors.hpp"

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace mirror::daemon {

namespace json = boost::json;

namespace {

// Times are unix milliseconds in the object: whole numbers read back exactly.
std::int64_t to_ms(double seconds) { return std::llround(seconds * 1000.0); }
double to_seconds(std::uint64_t ms) { return record_time(static_cast<double>(ms) / 1000.0); }

json::object render_map(std::map<std::string, double> const& since) {
    json::object out;
    for (auto const& [name, t] : since)
        out[name] = to_ms(t);
    return out;
}

/// Keeps the `max` earliest of `since`: the clocks that page first. (n log n: an origin may
/// have a million refs.)
void keep_earliest(std::map<std::string, double>& since, std::size_t max) {
    if (since.size() <= max)
        return;
    std::vector<std::pair<double, std::string>> by_time;
    by_time.reserve(since.size());
    for (auto& [name, t] : since)
        by_time.emplace_back(t, name);
    std::nth_element(by_time.begin(), by_time.begin() + static_cast<std::ptrdiff_t>(max), by_time.end());
    since.clear();
    for (std::size_t i = 0; i < max; ++i)
        since.emplace(std::move(by_time[i].second), by_time[i].first);
}

result<std::map<std::string, double>> parse_map(fdl::object_fields const& fields, std::string_view key) {
    std::map<std::string, double> out;
    auto child = fields.optional_child(key);
    if (!child)
        return child.error();
    if (!*child)
        return out;
    for (auto const& [name, value] : (*child)->object()) {
        auto ms = fdl::as_count(value);
        if (!ms)
            return (*child)->fail(fdl::fdl_errc::bad_value, name, "is not unix milliseconds");
        if (out.size() < mirror_clocks::max_entries)
            out.emplace(std::string(name), to_seconds(*ms));
    }
    return out;
}

} // namespace

mirror_clocks clocks_of(repository_state const& state) {
    mirror_clocks out;
    out.failing_since = state.failing_since;
    for (auto const& ref : state.record.refs)
        if (ref.behind_since)
            out.behind_since[ref.name] = *ref.behind_since;
    for (auto const& held : state.record.held)
        out.held_since[held.version] = held.since;
    keep_earliest(out.behind_since, mirror_clocks::max_entries);
    keep_earliest(out.held_since, mirror_clocks::max_entries);
    return out;
}

std::string render_clocks(mirror_clocks const& clocks, std::string const& holder, double now) {
    json::object out;
    out["written_by"] = holder;
    out["written_at"] = to_ms(now);
    if (clocks.failing_since)
        out["failing_since"] = to_ms(*clocks.failing_since);
    out["behind_since"] = render_map(clocks.behind_since);
    out["held_since"] = render_map(clocks.held_since);
    return json::serialize(out) + "\n";
}

result<mirror_clocks> parse_clocks(std::string_view text, std::string const& where) {
    auto value = fdl::parse_json(text, where);
    if (!value)
        return value.error();
    auto fields = fdl::object_fields::top(*value, where);
    if (!fields)
        return fields.error();
    mirror_clocks out;
    std::optional<std::uint64_t> failing;
    fdl::field_reader read(*fields);
    read.optional_count("failing_since", failing);
    if (auto ok = read.done(); !ok)
        return ok.error();
    if (failing)
        out.failing_since = to_seconds(*failing);
    auto behind = parse_map(*fields, "behind_since");
    if (!behind)
        return behind.error();
    auto held = parse_map(*fields, "held_since");
    if (!held)
        return held.error();
    out.behind_since = std::move(*behind);
    out.held_since = std::move(*held);
    return out;
}

void adopt_clocks(repository_state& state, mirror_clocks const& clocks) {
    state.failing_since = clocks.failing_since;
    auto& refs = state.record.refs;
    for (auto& ref : refs) {
        auto found = clocks.behind_since.find(ref.name);
        ref.behind_since = found == clocks.behind_since.end() ? std::nullopt : std::optional(found->second);
    }
    for (auto const& [name, since] : clocks.behind_since) {
        bool const known = std::any_of(refs.begin(), refs.end(), [&](auto const& r) { return r.name == name; });
        if (!known) // kept for record_pass, which takes a known "since" for a ref still behind
            refs.push_back(ref_record{name, {}, std::nullopt, 0, since});
    }
    auto& held = state.record.held;
    std::erase_if(held, [&](auto const& h) { return !clocks.held_since.contains(h.version); });
    for (auto& h : held)
        h.since = clocks.held_since.at(h.version);
    for (auto const& [version, since] : clocks.held_since) {
        bool const known = std::any_of(held.begin(), held.end(), [&](auto const& h) { return h.version == version; });
        if (!known)
            held.push_back(held_record{version, {}, {}, since});
    }
}

} // namespace mirror::daemon
