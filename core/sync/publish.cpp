// Publishing one version, gathered (gather.cpp) and checked: plan it against the mirror,
// copy it in plan order, and write version.json last. Any failure holds the version;
// nothing of it is published.

#include "core/catalog/catalog_reader.hpp"
#include "core/io/errors.hpp"
#include "core/sync/copy.hpp"
#include "core/sync/detail/pass.hpp"
#include "core/sync/errors.hpp"
#include "core/sync/ledger.hpp"
#include "core/sync/limits.hpp"
#include "core/sync/plan.hpp"
#include "core/sync/workers.hpp"
#include "verify/errors.hpp"

#include <span>

namespace mirror::sync::detail {

namespace {

/// Plans a checked version against what the mirror holds; lists the mirror's data files
/// and loads its ledger on first need.
awaitable<result<version_plan>> plan_checked(pass& p, version_inputs const& inputs) {
    if (!inputs.data_files.empty() && !p.mirror_data) {
        auto listed_mirror = co_await list_data_sizes(p.mirror, p.settings.data_dir, listing_share(p.options.memory));
        if (!listed_mirror) {
            p.note_failure(with_context(listed_mirror.error(), "mirror"), true);
            co_return listed_mirror.error();
        }
        p.mirror_data = std::move(*listed_mirror);
    }
    if (!inputs.data_files.empty() && !p.ledger) {
        // Small reads, as version.json's: no transfer slot; within a quarter of the budget.
        ledger_reads const reads{p.options.concurrency, nullptr,
                                 p.options.memory != nullptr ? p.options.memory->capacity() / 4 : 0};
        auto ledger = co_await load_ledger_index(p.mirror, reads);
        if (!ledger) {
            // A damaged ledger costs re-hashing, never correctness: start a fresh record.
            p.report.warnings.push_back("mirror: " + ledger.error().message + "; data files are hashed again");
            ledger = ledger_index{};
        }
        p.ledger = std::move(*ledger);
    }
    static path_sizes const none;
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
    for (auto const& [path, entry] : segment)
        p.ledger->add(path, entry);
    co_return result<void>();
}

/// Runs one step. Returns the error that holds the version; mirror failures are noted.
awaitable<result<void>> run_step(pass& p, copy_step const& step, memory_files const& memory, data_ledger& copied_data) {
    auto mode = step.kind == step_kind::version_file ? store::write_mode::replace : store::write_mode::create_only;
    if (auto in_memory = memory.find(step.key); in_memory != memory.end()) {
        auto written = co_await store::write_all(p.mirror, step.key, in_memory->second, mode);
        if (!written) {
            if (step.kind == step_kind::record && written.error().code == io::store_errc::already_exists) {
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
        if (step.kind == step_kind::data_file && code == io::store_errc::already_exists) {
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
            p.mirror_data->add(path, copied->bytes);
        copied_data.emplace(std::move(path), ledger_entry{copied->bytes, copied->sha256});
    }
    co_return result<void>();
}

/// The version's check, as gathered ahead or made now; nullptr when the version is held
/// (its reason noted), or its first parent is.
awaitable<checked_version const*> checked_for_publication(pass& p, gathered_version& gathered) {
    std::string const& id = gathered.id;
    auto const* loaded = co_await load_origin_record(p, id);
    if (!*loaded) {
        p.hold(id, (*loaded).error());
        co_return nullptr;
    }
    auto const& record = (*loaded)->record;
    // A shallow mirror publishes the oldest version of its window without its parent; a
    // parent this pass held holds its children all the same (the order puts parents first).
    if (auto parent = record.first_parent();
        parent && !p.is_published(*parent) && (!p.options.partial.depth || p.held.contains(*parent))) {
        p.hold(id, make_error(sync_errc::ancestor_held,
                              "versions/" + id + ": its first parent " + *parent + " is not published"));
        co_return nullptr;
    }
    if (!gathered.checked) {
        gathered.checked = co_await gather_checked(p, id, **loaded);
        gathered.scratch_failed = !*gathered.checked && p.scratch.failed();
    }
    auto const& checked = *gathered.checked;
    if (checked)
        co_return &*checked;
    if (gathered.scratch_failed)
        p.note_failure(checked.error(), true); // the local disk: no version can pass
    if (!p.mirror_failure) { // a failed mirror write stops the pass instead
        p.note_failure(checked.error(), false);
        p.hold(id, checked.error());
    }
    if (checked.error().code.category() == verify::verify_category() && !p.mirror_failure)
        co_await count_pending_unchecked(p, id, record); // what a signature would let in
    co_return nullptr;
}

/// However a publication ends, the data files it still misses are pending
/// (fdl_mirror_pending_files): counted when this goes.
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
};

/// The plan's first `data_steps` steps (its data files), by up to `concurrency` workers:
/// the first failure (stopped when the pass was asked to stop), or nullopt.
awaitable<std::optional<error>> copy_data_files(pass& p, std::string const& id, version_plan const& plan,
                                                std::size_t data_steps, memory_files const& memory,
                                                data_ledger& copied_data) {
    std::size_t next = 0;
    std::optional<error> failure;
    std::function<awaitable<void>()> worker = [&]() -> awaitable<void> {
        while (next < data_steps && !failure && !p.mirror_failure) {
            if (p.stop_requested()) {
                failure = make_error(sync_errc::stopped, "versions/" + id + ": stopped before all its data files");
                break;
            }
            auto const& step = plan.steps[next++];
            auto done = co_await run_step(p, step, memory, copied_data);
            if (!done && !failure)
                failure = done.error();
        }
    };
    co_await run_workers(std::min(p.options.concurrency, data_steps), worker);
    co_return failure;
}

/// The private catalog copies of a version go when it is done, published or held.
struct forget_copies {
    pass& p;
    std::string folder;
    ~forget_copies() {
        p.scratch.forget(folder);
        std::erase_if(p.checked_copies, [&](std::string const& key) { return key.starts_with(folder); });
    }
};

/// The copy plan of a checked version; nullopt when it cannot be made (the version held).
awaitable<std::optional<version_plan>> plan_or_hold(pass& p, std::string const& id, checked_version const& checked) {
    auto plan = co_await plan_checked(p, checked.inputs);
    if (plan)
        co_return std::move(*plan);
    if (!p.mirror_failure) { // a failed mirror write stops the pass instead
        p.note_failure(plan.error(), false);
        p.hold(id, plan.error());
    }
    co_return std::nullopt;
}

/// A version checked and planned against the mirror, ready to copy.
struct ready_version {
    checked_version const* checked = nullptr;
    version_plan plan;
};

/// The version's check and copy plan; nullopt when it is held (its reason noted) or its
/// first parent is.
awaitable<std::optional<ready_version>> check_and_plan(pass& p, gathered_version& gathered) {
    auto const* checked = co_await checked_for_publication(p, gathered);
    if (checked == nullptr)
        co_return std::nullopt;
    auto plan = co_await plan_or_hold(p, gathered.id, *checked);
    if (!plan)
        co_return std::nullopt;
    co_return ready_version{checked, std::move(*plan)};
}

} // namespace

awaitable<void> assess_version(pass& p, gathered_version& gathered) {
    std::string const& id = gathered.id;
    forget_copies forget{p, "versions/" + id + "/"};
    auto ready = co_await check_and_plan(p, gathered);
    if (!ready)
        co_return;
    auto const* checked = ready->checked;
    auto const& plan = ready->plan;
    planned_version out{id};
    for (auto const& step : plan.steps) {
        if (step.kind == step_kind::ledger)
            continue; // the mirror's own record, not the version's
        auto in_memory = checked->memory.find(step.key);
        std::uint64_t const bytes =
            in_memory != checked->memory.end() ? in_memory->second.size() : step.expect.bytes.value_or(0);
        out.files += 1;
        out.bytes += bytes;
        if (step.kind == step_kind::data_file) {
            out.data_files += 1;
            out.data_bytes += bytes;
            if (p.mirror_data) // a later version sharing the file finds it there
                p.mirror_data->add(step.key.substr(p.settings.data_dir.size()), bytes);
        }
    }
    p.published_now.insert(id); // its children's first parent
    p.report.planned.push_back(std::move(out));
}

awaitable<void> publish_version(pass& p, gathered_version& gathered) {
    std::string const& id = gathered.id;
    forget_copies forget{p, "versions/" + id + "/"};
    auto ready = co_await check_and_plan(p, gathered);
    if (!ready)
        co_return;
    auto const* checked = ready->checked;
    auto const& plan = ready->plan;
    memory_files const& memory = checked->memory;
    data_ledger copied_data;
    count_pending pending{p, id, plan, copied_data};
    // Data files first, by workers; then the rest in order, one at a time (version.json last).
    std::size_t data_steps = 0;
    while (data_steps < plan.steps.size() && plan.steps[data_steps].kind == step_kind::data_file)
        ++data_steps;
    if (auto failed = co_await copy_data_files(p, id, plan, data_steps, memory, copied_data)) {
        if (!p.mirror_failure && failed->code != sync_errc::stopped) // stopped is not the version's fault
            p.hold(id, *failed);
        co_return;
    }
    for (auto const& step : std::span(plan.steps).subspan(data_steps)) {
        result<void> done;
        if (step.kind == step_kind::ledger)
            done = co_await write_ledger(p, step.key, plan.data_files, copied_data);
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
    for (auto const& problem : checked->problems)
        p.report.published_with_problems.push_back({id, problem});
    if (auto signer = p.signer_of.find(id); signer != p.signer_of.end())
        p.report.signers[id] = signer->second;
}

} // namespace mirror::sync::detail
