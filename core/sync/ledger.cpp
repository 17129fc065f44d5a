#include "core/sync/ledger.hpp"

#include "core/fdl/errors.hpp"
#include "core/fdl/ids.hpp"
#include "core/fdl/json_fields.hpp"
#include "core/io/errors.hpp"
#include "core/fdl/paths.hpp"
#include "core/fdl/repo_settings.hpp"
#include "core/sync/limits.hpp"
#include "core/sync/transfer_slots.hpp"
#include "core/sync/workers.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <functional>
#include <optional>
#include <vector>

namespace mirror::sync {

namespace json = boost::json;

// A segment lists the data files of one version at most; this bounds what one file of a
// damaged mirror can make the loader allocate.
static constexpr std::size_t max_segment_bytes = 256 * 1024 * 1024;

std::string ledger_key(std::string_view id) {
    return std::string(ledger_prefix) + std::string(id) + ".json";
}

std::string render_ledger_segment(data_ledger const& entries) {
    json::object files;
    for (auto const& [path, entry] : entries)
        files[path] = json::object{{"bytes", entry.bytes}, {"sha256", verify::to_hex(entry.sha256)}};
    return json::serialize(json::object{{"data_files", std::move(files)}}) + "\n";
}

result<data_ledger> parse_ledger_segment(std::string_view text, std::string_view name, std::size_t max_tree_bytes) {
    auto fail = [&](std::string const& why) {
        return make_error(fdl::fdl_errc::bad_value, std::string(name) + ": " + why);
    };
    auto value = fdl::parse_json(text, name, max_tree_bytes);
    if (!value)
        return value.error();
    if (!value->is_object())
        return fail("not a ledger segment");
    auto const* files = value->get_object().if_contains("data_files");
    if (files == nullptr || !files->is_object())
        return fail("data_files: missing");
    data_ledger out;
    for (auto const& [path, entry] : files->get_object()) {
        if (auto problem = fdl::relative_path_problem(path))
            return fail("'" + std::string(path) + "': " + *problem);
        auto const* o = entry.if_object();
        auto const* bytes = o ? o->if_contains("bytes") : nullptr;
        auto const* sha = o ? o->if_contains("sha256") : nullptr;
        if (bytes == nullptr || !bytes->is_number() || sha == nullptr || !sha->is_string())
            return fail(std::string(path) + ": needs bytes and sha256");
        auto digest = verify::parse_sha256_hex(sha->get_string());
        auto size = bytes->is_uint64() ? bytes->get_uint64()
                    : bytes->is_int64() && bytes->get_int64() >= 0 ? static_cast<std::uint64_t>(bytes->get_int64())
                                                                    : UINT64_MAX;
        if (!digest || size == UINT64_MAX)
            return fail(std::string(path) + ": bad bytes or sha256");
        out.emplace(std::string(path), ledger_entry{size, *digest});
    }
    return out;
}

namespace {

/// Segments read at once, at most: what a walk holds besides the segment it hands on
/// (a segment of a version of 4,000 data files is about 600 KB of text).
constexpr std::size_t max_read_ahead = 8;

/// Reads each segment of the ledger and hands it to `take`, in name order. Up to `reads.concurrency` segments (at most max_read_ahead) are read at once, a
/// window at a time, each read holding one of `reads.shared` when given; the first
/// failure in that order stops the walk, as reading one at a time would.
awaitable<result<void>> for_each_segment(store::store& from, ledger_visitor const& take, ledger_reads reads) {
    // Only what the ledger's own names can be (a version's id): anything else a co-tenant
    // put there is not read.
    std::vector<std::pair<std::string, std::uint64_t>> keys; // key, listed size
    std::function<result<void>(store::list_entry)> listed_key = [&](store::list_entry entry) -> result<void> {
        std::string_view name = std::string_view(entry.key).substr(ledger_prefix.size());
        if (name.ends_with(".json") && fdl::is_version_id(name.substr(0, name.size() - 5)))
            keys.emplace_back(std::move(entry.key), entry.size);
        return {};
    };
    auto listed = co_await from.list(std::string(ledger_prefix), listed_key);
    if (!listed)
        co_return listed.error();
    // In name order whatever the store's listing order (a folder lists as its directory
    // does): the versions' order, their ids being UUIDv7, so a path's first record is its
    // first copy's.
    std::sort(keys.begin(), keys.end());
    // A segment's text, and its tree of about twice that, are held at once: a third of the
    // share each segment at most, and a window of segments whose sum fits the share.
    std::size_t const segment_limit =
        reads.memory == 0 ? max_segment_bytes : std::min(max_segment_bytes, std::max<std::size_t>(reads.memory / 3, 1));
    auto cost = [](std::uint64_t size) { return 3 * size; };
    for (auto const& [key, size] : keys)
        if (size > segment_limit)
            co_return make_error(io::store_errc::too_large,
                                 key + ": a ledger segment of " + std::to_string((size + (1 << 20) - 1) >> 20) +
                                     " MiB, more than the " + std::to_string(segment_limit >> 20) +
                                     " MiB this process's memory_limit lets it read");
    std::size_t const most = std::clamp<std::size_t>(reads.concurrency, 1, max_read_ahead);
    for (std::size_t first = 0; first < keys.size();) {
        std::size_t count = 1;
        std::uint64_t held = cost(keys[first].second);
        while (count < most && first + count < keys.size() &&
               (reads.memory == 0 || held + cost(keys[first + count].second) <= reads.memory))
            held += cost(keys[first + count++].second);
        std::vector<std::optional<result<std::string>>> texts(count);
        std::size_t pulled = 0;
        std::function<awaitable<void>()> reader = [&]() -> awaitable<void> {
            while (pulled < count) {
                std::size_t const i = pulled++;
                transfer_slots::slot slot;
                if (reads.shared != nullptr)
                    slot = co_await reads.shared->acquire();
                texts[i].emplace(co_await store::read_all(from, keys[first + i].first, segment_limit));
            }
        };
        co_await run_workers(count, reader);
        for (std::size_t i = 0; i < count; ++i) {
            auto& text = *texts[i];
            if (!text)
                co_return text.error();
            auto const tree_limit = reads.memory == 0 ? max_segment_bytes : 2 * segment_limit;
            auto segment = parse_ledger_segment(*text, keys[first + i].first, tree_limit);
            texts[i].reset();
            if (!segment)
                co_return segment.error();
            auto taken = co_await take(*segment);
            if (!taken)
                co_return taken.error();
        }
        first += count;
    }
    co_return result<void>();
}

} // namespace

awaitable<result<data_ledger>> load_ledger(store::store& from, ledger_reads reads) {
    data_ledger ledger;
    // The first record of a path is kept: it was copied once.
    ledger_visitor take = [&](data_ledger& segment) -> awaitable<result<void>> {
        ledger.merge(segment);
        co_return result<void>();
    };
    auto read = co_await for_each_segment(from, take, reads);
    if (!read)
        co_return read.error();
    co_return ledger;
}

awaitable<result<ledger_index>> load_ledger_index(store::store& from, ledger_reads reads) {
    ledger_index paths;
    ledger_visitor take = [&](data_ledger& segment) -> awaitable<result<void>> {
        for (auto const& [path, entry] : segment)
            paths.add(path, entry); // the first record of a path is kept, as in load_ledger
        co_return result<void>();
    };
    auto read = co_await for_each_segment(from, take, reads);
    if (!read)
        co_return read.error();
    co_return paths;
}

awaitable<result<void>> for_each_new_ledger_entries(store::store& from, ledger_visitor const& visit,
                                                    ledger_reads reads) {
    path_table<bool> handed;
    ledger_visitor take = [&](data_ledger& segment) -> awaitable<result<void>> {
        std::erase_if(segment, [&](auto const& recorded) { return !handed.add(recorded.first, true); });
        if (segment.empty())
            co_return result<void>();
        co_return co_await visit(segment);
    };
    co_return co_await for_each_segment(from, take, reads);
}

awaitable<result<std::string>> load_mirror_data_dir(store::store& mirror) {
    auto fdl_bytes = co_await store::read_all(mirror, "fdl.json", limits::fdl_json);
    if (!fdl_bytes)
        co_return with_context(fdl_bytes.error(), "mirror");
    auto settings = fdl::parse_repo_settings(*fdl_bytes);
    if (!settings)
        co_return error{settings.error().code, "mirror: fdl.json: " + settings.error().message};
    co_return settings->data_dir;
}

} // namespace mirror::sync
