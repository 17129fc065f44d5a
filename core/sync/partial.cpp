#include "core/sync/partial.hpp"

#include "core/fdl/json_fields.hpp"
#include "core/fdl/refs.hpp"
#include "core/io/errors.hpp"
#include "core/sync/errors.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>

namespace mirror::sync {

namespace {

std::vector<std::string> texts_of(std::vector<fdl::ref_pattern> const& patterns) {
    std::vector<std::string> out;
    for (auto const& p : patterns)
        out.push_back(p.text());
    return out;
}

result<std::vector<std::string>> strings(fdl::object_fields const& fields, std::string_view key) {
    auto array = fields.optional_array(key);
    if (!array)
        return array.error();
    std::vector<std::string> out;
    for (auto const& item : **array) {
        if (!item.is_string())
            return fields.fail(fdl::fdl_errc::wrong_type, key, "not a list of strings");
        out.emplace_back(item.as_string());
    }
    return out;
}

} // namespace

std::string render_partial(partial_record const& record) {
    boost::json::object out{{"include", boost::json::array(record.include.begin(), record.include.end())},
                            {"exclude", boost::json::array(record.exclude.begin(), record.exclude.end())},
                            {"since", record.since}};
    if (record.head)
        out["head"] = *record.head;
    if (record.depth)
        out["depth"] = *record.depth;
    return boost::json::serialize(out) + "\n";
}

std::string describe_partial(partial_record const& record) {
    auto joined = [](std::vector<std::string> const& patterns) {
        std::string out;
        for (auto const& pattern : patterns)
            out += (out.empty() ? "" : ", ") + pattern;
        return out;
    };
    std::string out = "follows " + (record.include.empty() ? std::string("every ref") : joined(record.include));
    if (!record.exclude.empty())
        out += " (not " + joined(record.exclude) + ")";
    if (record.head)
        out += ", HEAD names " + *record.head;
    if (record.depth)
        out += ", depth " + std::to_string(*record.depth);
    return out;
}

partial_record record_of(partial_settings const& settings, std::int64_t since) {
    return {texts_of(settings.follow.include), texts_of(settings.follow.exclude), settings.head, settings.depth, since};
}

fdl::ref_selection selection_of(partial_record const& record) {
    fdl::ref_selection out;
    for (auto [texts, into] : {std::pair{&record.include, &out.include}, std::pair{&record.exclude, &out.exclude}})
        for (auto const& text : *texts)
            if (auto pattern = fdl::ref_pattern::parse(text))
                into->push_back(std::move(*pattern));
    return out;
}

result<partial_record> parse_partial(std::string_view text, std::string const& where) {
    auto value = fdl::parse_json(text, where);
    if (!value)
        return value.error();
    auto fields = fdl::object_fields::top(*value, where);
    if (!fields)
        return fields.error();
    partial_record out;
    auto include = strings(*fields, "include");
    auto exclude = strings(*fields, "exclude");
    if (!include || !exclude)
        return (!include ? include : exclude).error();
    out.include = std::move(*include);
    out.exclude = std::move(*exclude);
    std::uint64_t since = 0;
    fdl::field_reader read(*fields);
    read.count("since", since);
    if (auto const* head = fields->find("head"); head && !head->is_null())
        read.optional_string("head", out.head);
    if (auto ok = read.done(); !ok)
        return ok.error();
    if (auto const* depth = fields->find("depth"); depth && !depth->is_null()) {
        if (!depth->is_uint64() && !(depth->is_int64() && depth->as_int64() > 0))
            return fields->fail(fdl::fdl_errc::wrong_type, "depth", "not a positive count");
        out.depth = depth->to_number<std::uint64_t>();
        if (*out.depth == 0)
            return fields->fail(fdl::fdl_errc::wrong_type, "depth", "not a positive count");
    }
    out.since = static_cast<std::int64_t>(std::min<std::uint64_t>(since, INT64_MAX));
    return out;
}

result<void> select_refs(refs_snapshot& origin_refs, fdl::ref_selection const& follow,
                         std::optional<std::string> const& head) {
    if (follow.everything())
        return {};
    std::erase_if(origin_refs.refs, [&](auto const& entry) { return !follow.follows(entry.first); });
    std::erase_if(origin_refs.unsettled, [&](auto const& entry) { return !follow.follows(entry.first); });
    if (!origin_refs.head || !origin_refs.head->symbolic || follow.follows(*origin_refs.head->symbolic))
        return {};
    if (!head)
        return make_error(sync_errc::refused_ref,
                          "HEAD: names " + *origin_refs.head->symbolic +
                              ", which this partial mirror does not follow: say which followed ref HEAD names "
                              "(head: in the configuration, --head for sync)");
    origin_refs.head = fdl::head_value{*head, std::nullopt};
    origin_refs.head_bytes = "ref: " + *head + "\n";
    return {};
}

awaitable<result<std::optional<partial_record>>> read_partial_record(store::store& repo) {
    std::string const key(partial_key);
    auto there = co_await store::read_if_present(repo, key, 1024 * 1024);
    if (!there)
        co_return with_context(there.error(), key);
    if (!*there)
        co_return std::optional<partial_record>();
    auto parsed = parse_partial(**there, key);
    if (!parsed)
        co_return parsed.error();
    co_return std::optional<partial_record>(std::move(*parsed));
}

bool deepens(std::optional<partial_record> const& before, std::optional<std::uint64_t> depth) {
    return before && before->depth && (!depth || *depth > *before->depth);
}

awaitable<result<void>> keep_partial_record(store::store& mirror, partial_settings const& wanted,
                                            std::optional<partial_record> const& before, std::int64_t now) {
    std::string const key(partial_key);
    if (wanted.everything()) {
        if (!before)
            co_return result<void>();
        auto removed = co_await mirror.remove(key); // a full mirror again
        if (!removed && removed.error().code != io::store_errc::not_found)
            co_return with_context(removed.error(), "mirror: " + key);
        co_return result<void>();
    }
    auto record = record_of(wanted, now);
    if (before && before->include == record.include && before->exclude == record.exclude &&
        before->head == record.head && before->depth == record.depth)
        co_return result<void>(); // the same: its `since` stands
    auto written = co_await store::write_all(mirror, key, render_partial(record), store::write_mode::replace);
    if (!written)
        co_return with_context(written.error(), "mirror: " + key);
    co_return result<void>();
}

} // namespace mirror::sync
