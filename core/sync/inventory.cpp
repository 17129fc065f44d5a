#include "core/sync/inventory.hpp"

#include "core/fdl/errors.hpp"
#include "core/fdl/ids.hpp"
#include "core/fdl/paths.hpp"
#include "core/io/errors.hpp"
#include "core/io/text.hpp"
#include "core/sync/errors.hpp"
#include "core/sync/limits.hpp"
#include "core/sync/workers.hpp"

#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <set>

namespace mirror::sync {

bool versions_listing::is_published(std::string_view id) const {
    auto const* files = files_of(id);
    return files != nullptr && files->contains("version.json");
}

folder_files const* versions_listing::files_of(std::string_view id) const {
    auto it = versions.find(id);
    return it == versions.end() ? nullptr : &it->second;
}

std::size_t listing_share(io::memory_budget const* memory) {
    if (memory == nullptr)
        return SIZE_MAX;
    return std::max<std::size_t>(memory->capacity() / 4, std::size_t{4} << 20);
}

/// The error of a listing of `what` past `max_bytes` of memory.
static error listing_too_large(store::store const& from, std::string const& what, std::size_t max_bytes) {
    return make_error(sync_errc::over_memory_limit, from.describe() + what + ": its listing would keep more than " +
                                                        std::to_string(max_bytes >> 20) +
                                                        " MiB of memory, more than memory_limit allows it (raise "
                                                        "memory_limit)");
}

awaitable<result<versions_listing>> list_versions(store::store& from, std::size_t max_bytes) {
    versions_listing listing;
    static constexpr std::string_view prefix = "versions/";
    std::size_t kept = 0, refused_more = 0;
    // The callback is a named local, not a temporary of the co_await expression: GCC 12
    // can destroy such temporaries twice (see docs/design.md, "Coroutines and GCC 12").
    std::function<result<void>(store::list_entry)> take = [&](store::list_entry entry) -> result<void> {
        if ((kept += entry.key.size() + listed_entry_bytes) > max_bytes)
            return listing_too_large(from, std::string(prefix), max_bytes);
        std::string_view rest = std::string_view(entry.key).substr(prefix.size());
        auto slash = rest.find('/');
        if (slash == std::string_view::npos)
            return {}; // a file directly under versions/: not a version
        std::string_view id = rest.substr(0, slash);
        if (!fdl::is_version_id(id))
            return {}; // not a version folder; readers ignore it, and so do we
        std::string_view path = rest.substr(slash + 1);
        if (auto problem = fdl::relative_path_problem(path)) {
            if (listing.refused.size() < fdl::max_refused_listed)
                listing.refused.push_back(std::string(io::utf8_prefix(entry.key, 200)) + ": " + *problem);
            else
                ++refused_more;
            return {};
        }
        listing.versions[std::string(id)].emplace(std::string(path), entry.size);
        return {};
    };
    auto listed = co_await from.list(std::string(prefix), take);
    if (!listed)
        co_return listed.error();
    if (refused_more > 0)
        listing.refused.push_back(std::to_string(refused_more) + " more keys under versions/ refused for their names");
    co_return listing;
}

awaitable<result<versions_listing>> probe_versions(store::store& from, versions_listing const& held,
                                                  std::vector<std::string> formats, std::size_t concurrency) {
    // What to ask for: every (version, path) pair, in order, shared by the workers.
    std::vector<std::pair<std::string, std::string>> asks;
    for (auto const& [id, files] : held.versions) {
        if (!files.contains("version.json"))
            continue;
        std::set<std::string, std::less<>> paths{"expired.json", "version.json.sig"};
        for (auto const& format : formats)
            if (!fdl::relative_path_problem(format + ".duckdb") && format.find('/') == std::string::npos)
                paths.insert("catalogs/" + format + ".duckdb");
        for (auto const& [path, size] : files)
            paths.insert(path);
        for (auto const& path : paths)
            asks.emplace_back(id, path);
    }
    versions_listing served;
    served.complete = false;
    std::optional<error> failure;
    std::size_t next = 0;
    std::function<awaitable<void>()> worker = [&]() -> awaitable<void> {
        while (next < asks.size() && !failure) {
            auto const& [id, path] = asks[next++];
            std::string key = "versions/" + id + "/" + path;
            auto info = co_await from.stat(std::move(key));
            if (info)
                served.versions[id].emplace(path, info->size);
            else if (info.error().code != io::store_errc::not_found && !failure)
                failure = info.error();
        }
    };
    co_await run_workers(std::max<std::size_t>(1, concurrency), worker);
    if (failure)
        co_return *failure;
    co_return served;
}

awaitable<result<std::map<std::string, std::uint64_t>>> list_data_files(store::store& from, std::string data_dir,
                                                                         std::size_t max_bytes) {
    std::map<std::string, std::uint64_t> files;
    std::size_t kept = 0;
    std::function<result<void>(store::list_entry)> take = [&](store::list_entry entry) -> result<void> {
        if ((kept += entry.key.size() + listed_entry_bytes) > max_bytes)
            return listing_too_large(from, data_dir, max_bytes);
        std::string path = entry.key.substr(data_dir.size());
        if (!fdl::relative_path_problem(path))
            files.emplace(std::move(path), entry.size);
        return {};
    };
    auto listed = co_await from.list(data_dir, take);
    if (!listed)
        co_return listed.error();
    co_return files;
}

awaitable<result<path_sizes>> list_data_sizes(store::store& from, std::string data_dir, std::size_t max_bytes) {
    path_sizes files;
    std::size_t kept = 0;
    std::function<result<void>(store::list_entry)> take = [&](store::list_entry entry) -> result<void> {
        if ((kept += listed_entry_bytes) > max_bytes)
            return listing_too_large(from, data_dir, max_bytes);
        std::string_view path = std::string_view(entry.key).substr(data_dir.size());
        if (!fdl::relative_path_problem(path))
            files.add(path, entry.size);
        return {};
    };
    auto listed = co_await from.list(data_dir, take);
    if (!listed)
        co_return listed.error();
    co_return files;
}

static void compare_with_refs_json(refs_snapshot& snapshot, result<fdl::refs_document> const& document,
                                   std::string const& side) {
    auto disagree = [&](std::string what) {
        snapshot.refs_json_disagreements.push_back(what);
        snapshot.warnings.push_back(std::move(what));
    };
    if (!document) {
        disagree(side + ": " + document.error().message);
        return;
    }
    for (auto const& refused : document->refused)
        disagree(side + ": " + refused.message);
    if (document->refused_more > 0)
        disagree(side + ": refs.json: " + std::to_string(document->refused_more) + " more entries refused");
    for (auto const& [name, id] : snapshot.refs) {
        auto it = document->refs.find(name);
        if (it == document->refs.end())
            disagree(side + ": refs.json lacks " + name);
        else if (it->second != id)
            disagree(side + ": refs.json says " + name + " is " + it->second + ", " + name + " says " + id);
    }
    for (auto const& [name, id] : document->refs)
        if (fdl::is_mirrored_ref(name) && !snapshot.refs.contains(name) && !snapshot.unsettled.contains(name))
            disagree(side + ": refs.json names " + name + ", which refs/ does not hold");
}

/// Refuses a ref in `snapshot`: named while fewer than fdl::max_refused_listed are,
/// counted after (finish_refusals says how many more).
static void refuse_ref(refs_snapshot& snapshot, std::string message) {
    if (snapshot.refused.size() < fdl::max_refused_listed)
        snapshot.refused.push_back(make_error(sync_errc::refused_ref, std::move(message)));
    else
        ++snapshot.refused_more;
}

static void finish_refusals(refs_snapshot& snapshot, std::string const& side) {
    if (snapshot.refused_more > 0)
        snapshot.refused.push_back(make_error(sync_errc::refused_ref,
                                              side + ": " + std::to_string(snapshot.refused_more) +
                                                  " more refs refused, not named one by one"));
}

/// Whether `name`'s form is one this mirror takes; refuses it in `snapshot` otherwise.
static bool acceptable_ref_name(refs_snapshot& snapshot, std::string const& name, ref_limits const& limits,
                                std::string const& side) {
    if (name.size() > limits.max_name_bytes) {
        std::string const shown = std::string(io::utf8_prefix(name, 80)) + (name.size() > 80 ? "…" : "");
        refuse_ref(snapshot, side + ": " + shown + ": a name of " + std::to_string(name.size()) +
                                 " bytes, more than the " + std::to_string(limits.max_name_bytes) +
                                 " this mirror accepts");
        return false;
    }
    if (auto problem = fdl::ref_name_problem(name)) {
        refuse_ref(snapshot, side + ": " + name + ": " + *problem);
        return false;
    }
    return true;
}

/// Whether `name` passes the checks and limits, taken in name order; refuses it in
/// `snapshot` otherwise.
static bool accept_ref_name(refs_snapshot& snapshot, std::string const& name, ref_limits const& limits,
                            std::size_t& accepted, std::size_t& over_limit, std::string const& side) {
    if (!acceptable_ref_name(snapshot, name, limits, side))
        return false;
    if (accepted == limits.max_refs) {
        ++over_limit;
        return false;
    }
    ++accepted;
    return true;
}

static void refuse_past_limit(refs_snapshot& snapshot, std::size_t over_limit, ref_limits const& limits,
                              std::string const& side) {
    if (over_limit > 0)
        snapshot.refused.push_back(make_error(
            sync_errc::refused_ref, side + ": " + std::to_string(limits.max_refs + over_limit) + " refs, more than the " +
                                        std::to_string(limits.max_refs) + " this mirror follows: the first " +
                                        std::to_string(limits.max_refs) + " by name are taken, " +
                                        std::to_string(over_limit) + " are not"));
}

/// Reads one ref file into `snapshot`. Its name when its bytes are no version id, with why
/// in `unparsed` (the caller reads it again after a pause); nothing otherwise.
static awaitable<result<void>> read_ref_file(store::store& from, refs_snapshot& snapshot, std::string name,
                                             std::string const& side, std::map<std::string, error>& unparsed) {
    auto bytes = co_await store::read_all(from, name, limits::ref_file);
    if (!bytes) {
        if (bytes.error().code == io::store_errc::not_found)
            co_return result<void>(); // deleted since the listing
        if (bytes.error().code == io::store_errc::too_large) {
            refuse_ref(snapshot, side + ": " + bytes.error().message);
            co_return result<void>();
        }
        co_return with_context(bytes.error(), side);
    }
    auto id = fdl::parse_ref_file(*bytes, name);
    if (!id)
        unparsed.insert_or_assign(std::move(name), make_error(sync_errc::refused_ref, side + ": " + id.error().message));
    else
        snapshot.refs.emplace(std::move(name), std::move(*id));
    co_return result<void>();
}

static awaitable<result<void>> read_listed_refs(store::store& from, refs_snapshot& snapshot, std::string const& side,
                                                ref_limits const& limits, std::map<std::string, error>& unparsed) {
    // Checked as they are listed, and only the first max_refs by name kept: a listing of a
    // million refs costs max_refs names, never a million (issue 45).
    std::set<std::string> names;
    std::size_t over_limit = 0;
    std::function<result<void>(store::list_entry)> take = [&](store::list_entry entry) -> result<void> {
        if (!entry.key.starts_with("refs/heads/") && !entry.key.starts_with("refs/tags/"))
            return {}; // refs/requests/* and anything else is the host's own
        if (!acceptable_ref_name(snapshot, entry.key, limits, side))
            return {};
        names.insert(std::move(entry.key));
        if (names.size() > limits.max_refs) {
            names.erase(std::prev(names.end()));
            ++over_limit;
        }
        return {};
    };
    auto listed = co_await from.list("refs/", take);
    if (!listed)
        co_return listed.error();
    for (auto name : names)
        if (auto read = co_await read_ref_file(from, snapshot, std::move(name), side, unparsed); !read)
            co_return read.error();
    refuse_past_limit(snapshot, over_limit, limits, side);
    co_return result<void>();
}

namespace {

/// HEAD and refs.json as read, each parsed.
struct root_files {
    std::optional<std::string> head;
    std::optional<result<fdl::head_value>> head_parsed;
    std::optional<std::string> refs_json;
    std::optional<result<fdl::refs_document>> refs_json_parsed;

    /// Whether each file read parsed, or failed in a way a second look cannot change (a
    /// refs.json too large for the memory it may take).
    bool parsed() const {
        bool const refs_json_settled = !refs_json_parsed || *refs_json_parsed ||
                                       refs_json_parsed->error().code == fdl::fdl_errc::too_large;
        return (!head_parsed || *head_parsed) && refs_json_settled;
    }
};

} // namespace

static awaitable<result<root_files>> read_root_files(store::store& from, std::string const& side,
                                                     std::size_t max_tree_bytes) {
    root_files out;
    auto head = co_await store::read_if_present(from, "HEAD", limits::ref_file);
    if (!head)
        co_return with_context(head.error(), side);
    if (*head) {
        out.head_parsed = fdl::parse_head(**head);
        out.head = std::move(**head);
    }
    auto refs_json = co_await store::read_if_present(from, "refs.json", limits::refs_json);
    if (!refs_json)
        co_return with_context(refs_json.error(), side);
    if (*refs_json) {
        out.refs_json_parsed = fdl::parse_refs_json(**refs_json, max_tree_bytes);
        out.refs_json = std::move(**refs_json);
    }
    co_return out;
}

static awaitable<void> settle_pause() {
    net::steady_timer pause(co_await net::this_coro::executor, limits::settle_pause);
    co_await pause.async_wait(use_op);
}

awaitable<result<refs_snapshot>> read_refs(store::store& from, std::string side, ref_limits limits) {
    refs_snapshot snapshot;
    auto root = co_await read_root_files(from, side, limits.max_refs_json_tree_bytes);
    if (!root)
        co_return root.error();
    std::map<std::string, error> unparsed;
    bool const listing = from.caps().can_list;
    if (listing)
        if (auto read = co_await read_listed_refs(from, snapshot, side, limits, unparsed); !read)
            co_return read.error();

    // A file that did not parse may have been caught mid-write by a publisher that rewrites
    // in place: one pause, then a second look at each of them, before anything is reported.
    if (!root->parsed() || !unparsed.empty()) {
        co_await settle_pause();
        if (!root->parsed()) {
            *root = root_files{}; // the first look's text is not held while the second is read
            auto again = co_await read_root_files(from, side, limits.max_refs_json_tree_bytes);
            if (!again)
                co_return again.error();
            root = std::move(again);
        }
        auto first_look = std::exchange(unparsed, {});
        for (auto& [name, why] : first_look)
            if (auto read = co_await read_ref_file(from, snapshot, name, side, unparsed); !read)
                co_return read.error();
        snapshot.unsettled = std::move(unparsed);
    }

    snapshot.head_bytes = root->head;
    if (root->head_parsed) {
        if (*root->head_parsed)
            snapshot.head = std::move(**root->head_parsed);
        else
            snapshot.warnings.push_back(side + ": " + root->head_parsed->error().message);
    }
    snapshot.refs_json = std::move(root->refs_json); // moved: it may be 16 MiB
    if (listing) {
        if (root->refs_json_parsed)
            compare_with_refs_json(snapshot, *root->refs_json_parsed, side);
        finish_refusals(snapshot, side);
        co_return snapshot;
    }
    // A store that cannot list: refs.json is the list of refs.
    if (!root->refs_json_parsed)
        co_return make_error(io::store_errc::not_found,
                             side + ": refs.json: not found, and " + from.describe() + " cannot be listed");
    auto& document = *root->refs_json_parsed;
    if (!document)
        co_return with_context(document.error(), side);
    for (auto const& refused : document->refused)
        refuse_ref(snapshot, side + ": " + refused.message);
    snapshot.refused_more += document->refused_more;
    std::size_t accepted = 0, over_limit = 0;
    for (auto& [name, id] : document->refs)
        if (fdl::is_mirrored_ref(name) && accept_ref_name(snapshot, name, limits, accepted, over_limit, side))
            snapshot.refs.emplace(name, id);
    refuse_past_limit(snapshot, over_limit, limits, side);
    finish_refusals(snapshot, side);
    co_return snapshot;
}

} // namespace mirror::sync
