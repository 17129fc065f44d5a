// Publishing one version: gather what it needs, check it, copy it in plan order, and
// write version.json last. Any failure holds the version; nothing of it is published.

#include "core/catalog/catalog_reader.hpp"
#include "core/catalog/errors.hpp"
#include "core/fdl/files_index.hpp"
#include "core/fdl/small_files.hpp"
#include "core/store/errors.hpp"
#include "core/sync/catalog_check.hpp"
#include "core/sync/copy.hpp"
#include "core/sync/detail/pass.hpp"
#include "core/sync/errors.hpp"
#include "core/sync/ledger.hpp"
#include "core/sync/limits.hpp"
#include "core/sync/plan.hpp"
#include "core/sync/workers.hpp"
#include "verify/sshsig.hpp"

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

awaitable<result<bool>> is_expired_at_origin(pass& p, std::string const& folder, folder_files const* listed) {
    if (listed != nullptr)
        co_return listed->contains("expired.json");
    auto found = co_await p.origin.stat(folder + "expired.json");
    if (found)
        co_return true;
    if (found.error().code == store::store_errc::not_found)
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
/// Fills `memory` with files.json.
awaitable<result<std::vector<fdl::needed_data_file>>> data_files_of(pass& p, std::string const& folder,
                                                                    fdl::version_record const& record,
                                                                    folder_files const* listed,
                                                                    memory_files& memory, bool& scratch_failed) {
    std::optional<fdl::files_index> index;
    if (record.files) {
        std::string key = folder + record.files->path;
        auto bytes = co_await read_pinned(p, key, *record.files, limits::files_json);
        if (!bytes)
            co_return bytes.error();
        auto parsed = fdl::parse_files_index(*bytes, key);
        if (!parsed)
            co_return parsed.error();
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
        auto verdict = co_await check_version_catalogs(p.origin, folder, record, checked_index, others, p.scratch,
                                                       p.options.catalogs, p.options.pool, scratch_failed);
        if (!verdict)
            co_return verdict.error();
        if (!verdict->problems.empty())
            co_return first_of(verdict->problems);
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
        auto listed_data = co_await list_data_files(p.origin, p.settings.data_dir);
        if (!listed_data)
            co_return with_context(listed_data.error(), "origin");
        p.origin_data = std::move(*listed_data);
    }
    std::vector<fdl::needed_data_file> all;
    for (auto const& [path, size] : *p.origin_data)
        all.push_back({path, size});
    co_return all;
}

/// Gathers and checks what a version needs from the origin. Writes nothing to the mirror
/// and reports nothing; of the pass it touches only what is this version's own (its
/// scratch copies, its signer) and caches of origin reads, so that it can run while
/// earlier versions are published.
awaitable<result<checked_version>> gather(pass& p, std::string const& id, loaded_version const& loaded,
                                          bool& scratch_failed) {
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
        auto needed = co_await data_files_of(p, folder, record, listed, memory, scratch_failed);
        if (!needed)
            co_return needed.error();
        inputs.data_files = std::move(*needed);
        inputs.data_files_pinned_by = catalog::reader_available() ? "the catalog" : "files.json";
        if (record.dataset) {
            std::string key = folder + record.dataset->path;
            auto bytes = co_await read_pinned(p, key, *record.dataset, limits::dataset_json);
            if (!bytes)
                co_return bytes.error();
            if (auto parsed = fdl::parse_dataset(*bytes, key); !parsed)
                co_return parsed.error();
            memory.emplace(key, std::move(*bytes));
        }
    }
    co_return out;
}

/// Plans a checked version against what the mirror holds; lists the mirror's data files
/// and loads its ledger on first need.
awaitable<result<version_plan>> plan_checked(pass& p, version_inputs const& inputs) {
    if (!inputs.data_files.empty() && !p.mirror_data) {
        auto listed_mirror = co_await list_data_files(p.mirror, p.settings.data_dir);
        if (!listed_mirror) {
            p.note_failure(with_context(listed_mirror.error(), "mirror"), true);
            co_return listed_mirror.error();
        }
        p.mirror_data = std::move(*listed_mirror);
    }
    if (!inputs.data_files.empty() && !p.ledger) {
        auto ledger = co_await load_ledger(p.mirror);
        if (!ledger) {
            // A damaged ledger costs re-hashing, never correctness: start a fresh record.
            p.report.warnings.push_back("mirror: " + ledger.error().message + "; data files are hashed again");
            ledger = data_ledger{};
        }
        p.ledger = std::move(*ledger);
    }
    static std::map<std::string, std::uint64_t> const none;
    auto plan = plan_version(inputs, p.mirror_data ? *p.mirror_data : none);
    if (!plan.conflicts.empty())
        co_return plan.conflicts.front();
    co_return plan;
}

/// Writes the ledger segment of a version: every data file it needs that the ledger does
/// not hold yet, with the digest taken while copying or, for a file an interrupted pass
/// copied without recording it, from the mirror's copy.
awaitable<result<void>> write_ledger(pass& p, std::string const& key, std::vector<fdl::needed_data_file> const& files,
                                     data_ledger& copied) {
    data_ledger segment;
    for (auto const& file : files) {
        if (p.ledger->contains(file.path))
            continue;
        if (auto it = copied.find(file.path); it != copied.end()) {
            segment.insert(*it);
            continue;
        }
        std::string data_key = p.settings.data_dir + file.path;
        expectation size{file.bytes, {}, catalog::reader_available() ? "the catalog" : "files.json"};
        auto hashed = co_await hash_object(p.mirror, data_key, size, p.options.pool);
        if (!hashed) {
            p.note_failure(with_context(hashed.error(), "mirror"), true);
            co_return hashed.error();
        }
        segment.emplace(file.path, ledger_entry{hashed->bytes, hashed->sha256});
    }
    if (segment.empty())
        co_return result<void>();
    auto written = co_await store::write_all(p.mirror, key, render_ledger_segment(segment), store::write_mode::replace);
    if (!written) {
        p.note_failure(with_context(written.error(), "mirror"), true);
        co_return written.error();
    }
    p.ledger->merge(segment);
    co_return result<void>();
}

/// Runs one step. Returns the error that holds the version; mirror failures are noted.
awaitable<result<void>> run_step(pass& p, copy_step const& step, memory_files const& memory, data_ledger& copied_data) {
    auto mode = step.kind == step_kind::version_file ? store::write_mode::replace : store::write_mode::create_only;
    if (auto in_memory = memory.find(step.key); in_memory != memory.end()) {
        auto written = co_await store::write_all(p.mirror, step.key, in_memory->second, mode);
        if (!written) {
            if (step.kind == step_kind::record && written.error().code == store::store_errc::already_exists) {
                // Published meanwhile, by another pass: fine if it is the same record.
                auto held = co_await store::read_all(p.mirror, step.key, limits::version_json);
                if (held && *held == in_memory->second)
                    co_return result<void>();
                co_return make_error(sync_errc::version_rewritten,
                                     step.key + ": the mirror already holds another record for this version (kept)");
            }
            p.note_failure(with_context(written.error(), "mirror"), true);
            co_return written.error();
        }
        p.report.files_copied += 1;
        p.report.bytes_copied += in_memory->second.size();
        co_return result<void>();
    }
    // A catalog checked by the gate is published from its private copy: the bytes checked
    // are the bytes written.
    store::store* source = &p.origin;
    if (p.checked_copies.contains(step.key)) {
        auto copies = p.scratch.files();
        if (!copies)
            co_return copies.error();
        source = *copies;
    }
    std::optional<transfer_slots::slot> slot;
    if (p.options.shared_transfers) {
        auto granted = co_await p.options.shared_transfers->acquire();
        slot.emplace(std::move(granted));
    }
    bool on_mirror = false;
    auto copied =
        co_await copy_object(*source, p.mirror, step.key, step.expect, mode, on_mirror, p.observer, p.options.pool);
    if (!copied) {
        auto const& code = copied.error().code;
        if (step.optional && code == sync_errc::missing_file)
            co_return result<void>();
        if (step.kind == step_kind::data_file && code == store::store_errc::already_exists) {
            // Written meanwhile, by another pass: the same size is the same immutable file;
            // another size blocks this version, and the mirror's file is kept.
            auto have = co_await p.mirror.stat(step.key);
            if (have && have->size == step.expect.bytes)
                co_return result<void>();
            co_return make_error(sync_errc::data_file_conflict,
                                 step.key + ": appeared in the mirror with another size while copying (kept)");
        }
        p.note_failure(copied.error(), on_mirror);
        co_return copied.error();
    }
    p.report.files_copied += 1;
    p.report.bytes_copied += copied->bytes;
    if (step.kind == step_kind::data_file) {
        std::string path = step.key.substr(p.settings.data_dir.size());
        if (p.mirror_data)
            p.mirror_data->emplace(path, copied->bytes);
        copied_data.emplace(std::move(path), ledger_entry{copied->bytes, copied->sha256});
    }
    co_return result<void>();
}

/// An estimate of what a checked version holds until it is published: its files in
/// memory, its list of data files, and its catalog's copy in the scratch folder.
std::uint64_t held_by(checked_version const& checked) {
    std::uint64_t bytes = 0;
    for (auto const& [key, content] : checked.memory)
        bytes += key.size() + content.size();
    for (auto const& file : checked.inputs.data_files)
        bytes += sizeof(file) + file.path.size();
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
    auto checked = co_await gather(p, id, **loaded, out.scratch_failed);
    if (checked)
        out.held_bytes = held_by(*checked);
    out.checked = std::move(checked);
    co_return out;
}

awaitable<void> publish_version(pass& p, gathered_version& gathered) {
    std::string const& id = gathered.id;
    // The private catalog copies of this version go when it is done, published or held.
    struct forget_copies {
        pass& p;
        std::string folder;
        ~forget_copies() {
            p.scratch.forget(folder);
            std::erase_if(p.checked_copies, [&](std::string const& key) { return key.starts_with(folder); });
        }
    } forget{p, "versions/" + id + "/"};
    auto const* loaded = co_await load_origin_record(p, id);
    if (!*loaded) {
        p.hold(id, (*loaded).error());
        co_return;
    }
    auto const& record = (*loaded)->record;
    if (auto parent = record.first_parent(); parent && !p.is_published(*parent)) {
        p.hold(id, make_error(sync_errc::ancestor_held,
                              "versions/" + id + ": its first parent " + *parent + " is not published"));
        co_return;
    }
    if (!gathered.checked) {
        gathered.scratch_failed = false;
        gathered.checked = co_await gather(p, id, **loaded, gathered.scratch_failed);
    }
    auto refuse = [&](error const& why) { // a failed mirror write stops the pass instead
        if (!p.mirror_failure) {
            p.note_failure(why, false);
            p.hold(id, why);
        }
    };
    auto& checked = *gathered.checked;
    if (!checked) {
        if (gathered.scratch_failed)
            p.note_failure(checked.error(), true); // the local disk: no version can pass
        refuse(checked.error());
        co_return;
    }
    auto plan = co_await plan_checked(p, checked->inputs);
    if (!plan) {
        refuse(plan.error());
        co_return;
    }
    memory_files const& memory = checked->memory;
    data_ledger copied_data;
    // However this ends, the data files still missing are pending (fdl_mirror_pending_files).
    struct count_pending {
        pass& p;
        std::string const& id;
        version_plan const& plan;
        data_ledger const& copied;
        ~count_pending() {
            bool const published = p.published_now.contains(id);
            for (auto const& step : plan.steps) {
                if (step.kind != step_kind::data_file)
                    continue;
                std::string const path = step.key.substr(p.settings.data_dir.size());
                bool const present = copied.contains(path) || (p.mirror_data && p.mirror_data->contains(path));
                if (published || present)
                    p.pending_data.erase(step.key);
                else
                    p.pending_data.emplace(step.key, step.expect.bytes.value_or(0));
            }
        }
    } pending{p, id, *plan, copied_data};
    // Data files first, by up to `concurrency` workers; the rest in order, one at a time.
    std::size_t data_steps = 0;
    while (data_steps < plan->steps.size() && plan->steps[data_steps].kind == step_kind::data_file)
        ++data_steps;
    std::size_t next = 0;
    std::optional<error> data_failure;
    std::function<awaitable<void>()> copy_data_files = [&]() -> awaitable<void> {
        while (next < data_steps && !data_failure && !p.mirror_failure) {
            if (p.stop_requested()) {
                data_failure = make_error(sync_errc::stopped, "versions/" + id + ": stopped before all its data files");
                break;
            }
            auto const& step = plan->steps[next++];
            auto done = co_await run_step(p, step, memory, copied_data);
            if (!done && !data_failure)
                data_failure = done.error();
        }
    };
    co_await run_workers(std::min(p.options.concurrency, data_steps), copy_data_files);
    if (data_failure) {
        if (!p.mirror_failure && data_failure->code != sync_errc::stopped) // stopped is not the version's fault
            p.hold(id, *data_failure);
        co_return;
    }
    for (auto const& step : std::span(plan->steps).subspan(data_steps)) {
        result<void> done;
        if (step.kind == step_kind::ledger)
            done = co_await write_ledger(p, step.key, plan->data_files, copied_data);
        else
            done = co_await run_step(p, step, memory, copied_data);
        if (!done) {
            if (!p.mirror_failure)
                p.hold(id, done.error());
            co_return;
        }
    }
    p.published_now.insert(id);
    p.report.published.push_back(id);
    if (auto signer = p.signer_of.find(id); signer != p.signer_of.end())
        p.report.signers[id] = signer->second;
}

} // namespace mirror::sync::detail
