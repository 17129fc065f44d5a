// Gathering one version: read from the origin and check everything it needs (record,
// signature, files.json, dataset.json, the catalog gate) before anything of it is written.
// Runs ahead of publication (sync_pass.cpp, look_ahead); publish.cpp writes.

#include "core/catalog/catalog_reader.hpp"
#include "core/catalog/errors.hpp"
#include "core/fdl/errors.hpp"
#include "core/fdl/files_index.hpp"
#include "core/fdl/json_limits.hpp"
#include "core/fdl/small_files.hpp"
#include "core/io/errors.hpp"
#include "core/sync/catalog_check.hpp"
#include "core/sync/copy.hpp"
#include "core/sync/detail/pass.hpp"
#include "core/sync/errors.hpp"
#include "core/sync/limits.hpp"
#include "verify/sshsig.hpp"

#include <algorithm>
#include <cstdio>
#include <span>

namespace mirror::sync::detail {

namespace {

/// Reads a pinned file into memory and checks it against version.json.
awaitable<result<std::string>> read_pinned(pass& p, std::string key, fdl::pinned_file const& pinned,
                                           std::size_t limit) {
    auto bytes = co_await store::read_all(p.origin, key, limit);
    if (!bytes)
        co_return origin_read_error(bytes.error());
    if (auto ok = check_bytes(*bytes, {pinned.bytes, pinned.sha256, "version.json"}, key); !ok)
        co_return ok.error();
    co_return bytes;
}

/// What checking one version may still take in memory at once: files.json's text, tree
/// and index, its catalogs' contents, dataset.json's text. Granted from the process's
/// memory budget before anything is read; without a budget, nothing is counted.
class version_allowance {
public:
    static version_allowance unlimited() { return version_allowance(); }
    explicit version_allowance(std::uint64_t bytes) : left_(bytes), limited_(true) {}

    /// Takes `bytes`, or fails with over_memory_limit naming `what` (`key` and why).
    result<void> take(std::uint64_t bytes, std::string const& key, std::string const& what) {
        if (limited_ && bytes > left_)
            return make_error(sync_errc::over_memory_limit,
                              key + ": " + what + " would take " + mebibytes(bytes) + " of memory, more than the " +
                                  mebibytes(left_) + " left of what this mirror allows one version (memory_limit)");
        left_ -= limited_ ? bytes : 0;
        return {};
    }
    /// A share of what is left, for a step that makes more than it keeps; 0 when unlimited
    /// (so at least 1 when limited: 0 would lift the limit).
    std::uint64_t share(unsigned parts) const { return limited_ ? std::max<std::uint64_t>(left_ / parts, 1) : 0; }
    /// A JSON tree's limit: a share of what is left, or the default.
    std::size_t tree_limit(unsigned parts) const {
        return limited_ ? static_cast<std::size_t>(left_ / parts) : fdl::default_max_tree_bytes;
    }

    static std::string mebibytes(std::uint64_t bytes) {
        char text[32];
        std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
        return text;
    }

private:
    version_allowance() = default;
    std::uint64_t left_ = 0;
    bool limited_ = false;
};

/// A parse or catalog read that went past its share is the version's over_memory_limit.
error over_memory(error const& e) {
    bool over = e.code == fdl::fdl_errc::too_large || e.code == catalog::catalog_errc::over_memory_limit;
    return over ? make_error(sync_errc::over_memory_limit, e.message) : e;
}

awaitable<result<bool>> is_expired_at_origin(pass& p, std::string const& folder, folder_files const* listed) {
    if (listed != nullptr)
        co_return listed->contains("expired.json");
    auto found = co_await p.origin.stat(folder + "expired.json");
    if (found)
        co_return true;
    if (found.error().code == io::store_errc::not_found)
        co_return false;
    co_return origin_read_error(found.error());
}

/// The catalogs in other formats a version has: listed, or, where the origin cannot
/// list, the formats fdl.json declares (probed; absent ones are skipped).
std::vector<other_catalog> other_catalogs_of(pass const& p, folder_files const* listed) {
    std::vector<other_catalog> found;
    if (listed != nullptr) {
        for (auto const& [path, size] : *listed)
            if (declared_format(path))
                found.push_back({path, size});
    } else {
        for (auto const& format : p.settings.catalog_formats)
            found.push_back({"catalogs/" + format.ducklake + ".duckdb", std::nullopt});
    }
    return found;
}

/// The data files of a live version, and who vouches for their sizes. The frozen catalog
/// is the authority (spec README): where this build reads catalogs, the catalog names
/// them, after it passed every check against version.json, files.json and catalogs/*.
/// Otherwise files.json is the index, and a listing of data_dir the last resort.
/// Fills `memory` with files.json, and `problems` with what is wrong but does not hold
/// the version: a files.json that disagrees with the catalog.
awaitable<result<std::vector<fdl::needed_data_file>>> data_files_of(pass& p, std::string const& folder,
                                                                    fdl::version_record const& record,
                                                                    folder_files const* listed, memory_files& memory,
                                                                    std::vector<error>& problems,
                                                                    version_allowance& allowed) {
    std::optional<fdl::files_index> index;
    if (record.files) {
        std::string key = folder + record.files->path;
        if (auto ok = allowed.take(record.files->bytes, key, "its text"); !ok)
            co_return ok.error();
        auto bytes = co_await read_pinned(p, key, *record.files, limits::files_json);
        if (!bytes)
            co_return bytes.error();
        // The tree is made, the index from it beside it, then the tree goes.
        auto parsed = fdl::parse_files_index(*bytes, key, allowed.tree_limit(2));
        if (!parsed)
            co_return over_memory(parsed.error());
        if (auto ok = allowed.take(fdl::memory_bytes(*parsed), key, "its index"); !ok)
            co_return ok.error();
        index = std::move(*parsed);
        memory.emplace(key, std::move(*bytes));
    }
    // DuckDB replays a .wal beside a catalog, even read-only: a reader of such a folder
    // would see a catalog other than the one version.json pins.
    if (listed != nullptr && record.catalog && listed->contains(record.catalog->path + ".wal"))
        co_return make_error(catalog::catalog_errc::bad_catalog,
                             folder + record.catalog->path + ".wal: a write-ahead log beside the frozen catalog, "
                                                              "which readers would replay");
    if (catalog::reader_available()) {
        auto others = other_catalogs_of(p, listed);
        fdl::files_index const* checked_index = index ? &*index : nullptr;
        // The version's catalog is kept while one in another format is read beside it, each
        // decoded from an answer no larger than itself: a third of what is left for each.
        auto verdict = co_await check_version_catalogs(p.origin, folder, record, checked_index, others, p.scratch,
                                                       p.options.catalogs, p.options.pool,
                                                       allowed.share(3));
        if (!verdict)
            co_return over_memory(verdict.error());
        if (auto ok = allowed.take(verdict->contents.memory_bytes(), folder + record.catalog->path, "its contents");
            !ok)
            co_return ok.error();
        // The catalog is the authority and files.json only an index (spec README): a
        // version whose index disagrees is mirrored as the origin has it, with the
        // catalog's data files, and the disagreement is reported. Every other rule holds it.
        std::vector<error> holding;
        for (auto& problem : verdict->problems)
            (problem.code == catalog::catalog_errc::index_disagrees ? problems : holding).push_back(std::move(problem));
        if (!holding.empty())
            co_return over_memory(first_of(holding));
        p.checked_copies.insert(verdict->checked_copies.begin(), verdict->checked_copies.end());
        co_return std::move(verdict->contents.needed);
    }
    if (index)
        co_return fdl::needed_files(*index, folder + record.files->path);
    if (!p.origin.caps().can_list)
        co_return make_error(sync_errc::no_data_file_source,
                             folder + "version.json: no files.json, no catalog reader in this build, and the origin "
                                      "cannot be listed");
    if (!p.origin_data) {
        auto listed_data = co_await list_data_files(p.origin, p.settings.data_dir, listing_share(p.options.memory));
        if (!listed_data)
            co_return with_context(listed_data.error(), "origin");
        p.origin_data = std::move(*listed_data);
    }
    std::vector<fdl::needed_data_file> all;
    for (auto const& [path, size] : *p.origin_data)
        all.push_back({path, size});
    co_return all;
}

} // namespace

namespace {

awaitable<result<checked_version>> gather_within(pass& p, std::string const& id, loaded_version const& loaded,
                                                 version_allowance& allowed) {
    checked_version out;
    auto& memory = out.memory;
    auto& inputs = out.inputs;
    std::string folder = "versions/" + id + "/";
    auto const& record = loaded.record;
    folder_files const* listed =
        p.origin_versions && p.origin_versions->complete ? p.origin_versions->files_of(id) : nullptr;
    memory.emplace(folder + "version.json", loaded.bytes);

    auto expired = co_await is_expired_at_origin(p, folder, listed);
    if (!expired)
        co_return expired.error();
    inputs = version_inputs{id, p.settings.data_dir, &record};
    inputs.origin_files = listed;
    inputs.expired = *expired;
    for (auto const& format : p.settings.catalog_formats)
        inputs.catalog_formats.push_back(format.ducklake);

    bool withdrawn = false;
    if (*expired) {
        std::string key = folder + "expired.json";
        auto bytes = co_await store::read_all(p.origin, key, limits::expired_json);
        if (!bytes)
            co_return origin_read_error(bytes.error());
        auto parsed = fdl::parse_expiry(*bytes, key);
        if (!parsed)
            co_return parsed.error();
        withdrawn = parsed->withdrawn();
        memory.emplace(key, std::move(*bytes));
    }

    // The signature gate, before any file of the version is copied. The exact bytes
    // checked are the ones written. A withdrawn version's record may have been reduced
    // after it was signed, so its signature is copied as it is, not checked (as verify).
    if (p.options.trust.policy != verify::signature_policy::off && !withdrawn) {
        auto armored = co_await read_origin_signature(p, id);
        if (!armored)
            co_return armored.error();
        std::optional<std::string_view> signature;
        if (*armored)
            signature = **armored;
        auto signer = verify::check_version_signature(p.options.trust, loaded.bytes, signature, p.now);
        if (!signer)
            co_return with_context(signer.error(), "versions/" + id);
        if (*signer)
            p.signer_of[id] = **signer; // reported once the version is published
        if (*armored)
            memory.emplace(folder + "version.json.sig", std::move(**armored));
    }

    if (!*expired) { // an expired version keeps only its record, its mark and what remains
        if (!record.catalog)
            co_return make_error(sync_errc::missing_catalog, folder + "version.json: catalog: missing");
        auto needed =
            co_await data_files_of(p, folder, record, listed, memory, out.problems, allowed);
        if (!needed)
            co_return needed.error();
        inputs.data_files = std::move(*needed);
        inputs.data_files_pinned_by = catalog::reader_available() ? "the catalog" : "files.json";
        if (record.dataset) {
            std::string key = folder + record.dataset->path;
            if (auto ok = allowed.take(record.dataset->bytes, key, "its text"); !ok)
                co_return ok.error();
            auto bytes = co_await read_pinned(p, key, *record.dataset, limits::dataset_json);
            if (!bytes)
                co_return bytes.error();
            if (auto parsed = fdl::parse_dataset(*bytes, key); !parsed) // no tree: its text alone
                co_return parsed.error();
            memory.emplace(key, std::move(*bytes));
        }
    }
    co_return out;
}

/// What one version may always take, however small the budget.
constexpr std::uint64_t min_version_bytes = std::uint64_t{4} << 20;

/// What checking a version is first granted: enough for its files.json (text, a tree of
/// about twice the text, an index of about the text), its dataset.json's text and a
/// catalog of as many files (in contents and the answer they come from), and never less
/// than a small catalog needs. A version that needs more is checked again with all it may
/// have.
std::uint64_t first_estimate(fdl::version_record const& record) {
    std::uint64_t files = record.files ? record.files->bytes : 0;
    std::uint64_t dataset = record.dataset ? record.dataset->bytes : 0;
    return 4 * files + dataset + std::max<std::uint64_t>(3 * files, 2 << 20);
}

} // namespace

awaitable<result<checked_version>> gather_checked(pass& p, std::string const& id, loaded_version const& loaded) {
    if (p.options.memory == nullptr) {
        auto unlimited = version_allowance::unlimited();
        co_return co_await gather_within(p, id, loaded, unlimited);
    }
    // Half the budget at most: versions gathered ahead and uploads share the rest. A grant
    // is taken once and given back whole before a larger one is asked for, so that no
    // gatherer holds memory while it waits for more.
    // A budget too small for that still lets a small version through: at least
    // min_version_bytes, the part past the budget outside it (as a read's floor is).
    auto& budget = *p.options.memory;
    std::uint64_t most = std::max<std::uint64_t>(budget.capacity() / 2, min_version_bytes);
    std::uint64_t asked = std::min(first_estimate(loaded.record), most);
    for (;;) {
        auto granted = co_await budget.acquire(asked); // cut to the budget when larger
        version_allowance allowed(asked);
        auto checked = co_await gather_within(p, id, loaded, allowed);
        if (checked || checked.error().code != sync_errc::over_memory_limit || asked >= most)
            co_return checked;
        asked = most;
    }
}

awaitable<void> count_pending_unchecked(pass& p, std::string const& id, fdl::version_record const& record) {
    if (!record.files)
        co_return; // only the catalog names them, and it is not read for a version held before it
    std::string key = "versions/" + id + "/" + record.files->path;
    // An estimate, within what one version may take: a files.json past that counts nothing.
    std::size_t tree_limit =
        p.options.memory ? static_cast<std::size_t>(p.options.memory->capacity() / 4) : fdl::default_max_tree_bytes;
    if (record.files->bytes > tree_limit)
        co_return;
    auto bytes = co_await read_pinned(p, key, *record.files, limits::files_json);
    if (!bytes)
        co_return; // an estimate: what cannot be read counts nothing
    auto index = fdl::parse_files_index(*bytes, key, tree_limit);
    if (!index)
        co_return;
    auto needed = fdl::needed_files(*index, key);
    if (!needed)
        co_return;
    if (!p.mirror_data) {
        auto listed = co_await list_data_sizes(p.mirror, p.settings.data_dir, listing_share(p.options.memory));
        if (!listed)
            co_return; // the next version that needs the listing reports the failure
        p.mirror_data = std::move(*listed);
    }
    for (auto const& file : *needed)
        if (!p.mirror_data->contains(file.path))
            p.pending_data.emplace(p.settings.data_dir + file.path, file.bytes);
}

namespace {

/// An estimate of what a checked version holds until it is published: its files in
/// memory, its list of data files, and its catalog's copy in the scratch folder.
/// What a checked version keeps in memory until it is published, roughly.
std::uint64_t in_memory(checked_version const& checked) {
    std::uint64_t bytes = 0;
    for (auto const& [key, content] : checked.memory)
        bytes += key.size() + content.size();
    for (auto const& file : checked.inputs.data_files)
        bytes += sizeof(file) + file.path.size();
    return bytes;
}

/// ... and with its catalog copies on disk.
std::uint64_t held_by(checked_version const& checked) {
    std::uint64_t bytes = in_memory(checked);
    if (auto const& catalog = checked.inputs.record->catalog; catalog && !checked.inputs.expired)
        bytes += catalog->bytes;
    return bytes;
}

} // namespace

awaitable<result<std::optional<std::string>>> read_origin_signature(pass& p, std::string id) {
    std::string key = "versions/" + id + "/version.json.sig";
    if (p.origin_versions && p.origin_versions->complete) {
        auto const* listed = p.origin_versions->files_of(id);
        if (listed == nullptr || !listed->contains("version.json.sig"))
            co_return std::optional<std::string>();
    }
    auto bytes = co_await store::read_if_present(p.origin, key, verify::max_signature_bytes);
    if (!bytes)
        co_return origin_read_error(bytes.error());
    co_return bytes;
}

awaitable<gathered_version> gather_version(pass& p, std::string id) {
    gathered_version out{id};
    auto const* loaded = co_await load_origin_record(p, id);
    if (!*loaded)
        co_return out; // held with the reason when its turn comes
    if (auto parent = (*loaded)->record.first_parent(); parent && p.held.contains(*parent))
        co_return out; // held as ancestor_held: nothing to read
    auto checked = co_await gather_checked(p, id, **loaded);
    out.scratch_failed = !checked && p.scratch.failed();
    if (checked) {
        out.held_bytes = held_by(*checked);
        out.memory_bytes = in_memory(*checked);
    }
    out.checked = std::move(checked);
    co_return out;
}

} // namespace mirror::sync::detail
