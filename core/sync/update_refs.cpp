// Refs last: each ref moves only to a published version, tags never move, branches only
// forward (unless rewinds are allowed); then refs.json, then HEAD.

#include "core/fdl/refs.hpp"
#include "core/fdl/version_record.hpp"
#include "core/io/errors.hpp"
#include "core/sync/detail/pass.hpp"
#include "core/sync/errors.hpp"
#include "core/sync/limits.hpp"

#include <unordered_set>

namespace mirror::sync::detail {

namespace {

/// The first parent of a published version, from the origin's record when this pass read
/// it, else from the mirror's copy. nullopt when it cannot be read; "" for a root.
awaitable<std::optional<std::string>> parent_of(pass& p, std::string const& id) {
    if (auto it = p.origin_records.find(id); it != p.origin_records.end() && it->second)
        co_return it->second->record.first_parent().value_or("");
    if (auto it = p.mirror_parents.find(id); it != p.mirror_parents.end())
        co_return it->second;
    std::string key = "versions/" + id + "/version.json";
    std::optional<std::string> parent;
    auto bytes = co_await store::read_all(p.mirror, key, limits::version_json);
    if (bytes) {
        if (auto record = fdl::parse_version_record(*bytes, key))
            parent = record->first_parent().value_or("");
    } else if (bytes.error().code == io::store_errc::not_found && p.options.partial.depth) {
        // Below a shallow mirror's window: the line goes on at the origin only.
        auto const* loaded = co_await load_origin_record(p, id);
        if (*loaded)
            parent = (*loaded)->record.first_parent().value_or("");
    }
    p.mirror_parents.emplace(id, parent);
    co_return parent;
}

/// True when `ancestor` is reached from `id` by first parents (or is `id`).
awaitable<bool> descends_from(pass& p, std::string id, std::string ancestor) {
    std::unordered_set<std::string> visited;
    while (visited.size() <= limits::history_length) {
        if (id == ancestor)
            co_return true;
        if (!visited.insert(id).second)
            co_return false; // a cycle is never a way forward
        auto parent = co_await parent_of(p, id);
        if (!parent || parent->empty())
            co_return false;
        id = std::move(*parent);
    }
    co_return false;
}

/// Writes a ref file. Returns nullopt when the pass must stop, false when the mirror keeps
/// another tag it found there or refuses the name (reported), true when the ref names `id`.
awaitable<std::optional<bool>> write_ref(pass& p, std::string const& name, std::string const& id,
                                         store::write_mode mode) {
    std::string bytes = fdl::render_ref_file(id);
    auto written = co_await store::write_all(p.mirror, name, bytes, mode);
    if (!written && written.error().code == io::store_errc::already_exists) {
        // A create-only write whose answer was lost finds its own ref on the retry: the
        // same bytes are this pass's; another tag there is the mirror's, which it keeps.
        auto there = co_await store::read_all(p.mirror, name, limits::ref_file);
        if (there && *there == bytes)
            co_return true;
        if (there) {
            p.report.violations.push_back(make_error(
                sync_errc::tag_moved, name + ": the mirror already holds another target for it (it keeps its own)"));
            co_return false;
        }
    }
    if (!written && written.error().code == io::store_errc::rejected) {
        // The mirror refuses this one name (too long for its file system, a key S3 refuses):
        // the ref is refused, the others are still written.
        p.report.violations.push_back(
            make_error(sync_errc::refused_ref, name + ": the mirror cannot hold this ref: " + written.error().message));
        co_return false;
    }
    if (!written) {
        p.note_failure(with_context(written.error(), "mirror"), true);
        co_return std::nullopt;
    }
    co_return true;
}

/// Decides one ref and writes it when it moves. Returns false when the pass must stop.
awaitable<bool> update_one(pass& p, std::string const& name, std::string const& target, fdl::ref_map& held) {
    auto current = held.find(name);
    if (current != held.end() && current->second == target)
        co_return true;
    bool is_tag = name.starts_with("refs/tags/");
    std::optional<std::string> from;
    if (current != held.end())
        from = current->second;
    if (!p.is_published(target) && !(is_tag && from))
        co_return true; // the target is held (reported); the mirror's ref stays where it was
    if (is_tag && from) {
        p.report.violations.push_back(make_error(sync_errc::tag_moved, name + ": the origin's tag now names " + target +
                                                                           ", the mirror's names " + *from +
                                                                           " (tags never move; the mirror keeps its own)"));
        co_return true;
    }
    if (!is_tag && from && !co_await descends_from(p, target, *from)) {
        if (!p.options.allow_rewind) {
            p.report.violations.push_back(make_error(
                sync_errc::branch_rewound, name + ": the origin moved it to " + target +
                                               ", which does not descend from the mirror's " + *from +
                                               " (held; allow rewinds to follow)"));
            co_return true;
        }
        p.report.warnings.push_back(name + ": rewound from " + *from + " to " + target + " (rewinds allowed)");
    }
    auto mode = is_tag ? store::write_mode::create_only : store::write_mode::replace;
    auto written = co_await write_ref(p, name, target, mode);
    if (!written)
        co_return false;
    if (!*written)
        co_return true; // another tag was there, or the name is refused: reported
    held[name] = target;
    p.report.refs_updated.push_back({name, from, target});
    co_return true;
}

/// HEAD as the mirror should hold it: the origin's, once what it names is in the mirror.
std::optional<std::string> desired_head(pass const& p, refs_snapshot const& origin_refs, fdl::ref_map const& held,
                                        refs_snapshot const& mirror_refs) {
    if (origin_refs.head && origin_refs.head_bytes) {
        auto const& head = *origin_refs.head;
        if ((head.symbolic && held.contains(*head.symbolic)) || (head.detached && p.is_published(*head.detached)))
            return origin_refs.head_bytes;
    }
    return mirror_refs.head_bytes;
}

/// Versions of `target`'s first-parent line the mirror lacks, back to one it has.
std::uint64_t versions_behind(pass const& p, std::string target) {
    std::uint64_t behind = 0;
    while (!p.is_published(target) && behind < limits::history_length) {
        ++behind;
        auto it = p.origin_records.find(target);
        if (it == p.origin_records.end() || !it->second)
            break; // not read this pass (held early): the count is a lower bound
        auto parent = it->second->record.first_parent();
        if (!parent)
            break;
        target = *parent;
    }
    return behind;
}

void report_ref_states(pass& p, refs_snapshot const& origin_refs, fdl::ref_map const& held) {
    for (auto const& [name, target] : origin_refs.refs) {
        ref_state state{name, target, std::nullopt, 0};
        if (auto it = held.find(name); it != held.end())
            state.mirror_target = it->second;
        if (!state.in_sync())
            state.versions_behind = versions_behind(p, target);
        p.report.refs.push_back(std::move(state));
    }
}

} // namespace

awaitable<void> update_refs(pass& p, refs_snapshot const& origin_refs, refs_snapshot const& mirror_refs) {
    fdl::ref_map held = mirror_refs.refs;
    // Tags, then branches (the spec says "refs"; tags first, as they never move and so
    // never wait on a rewind decision); each only to a published version.
    for (bool tags : {true, false})
        for (auto const& [name, target] : origin_refs.refs)
            if (name.starts_with("refs/tags/") == tags && !co_await update_one(p, name, target, held))
                co_return;
    for (auto const& [name, id] : held)
        if (!origin_refs.refs.contains(name) && !origin_refs.unsettled.contains(name))
            p.report.warnings.push_back(name + (p.options.partial.follow.follows(name) ? ": gone from the origin"
                                                                                       : ": no longer followed") +
                                        "; the mirror keeps it at " + id);
    report_ref_states(p, origin_refs, held);

    auto head = desired_head(p, origin_refs, held, mirror_refs);
    fdl::refs_document document;
    if (head)
        if (auto parsed = fdl::parse_head(*head); parsed && parsed->symbolic)
            document.head = "ref: " + *parsed->symbolic;
    document.refs = held;
    std::string refs_json = fdl::render_refs_json(document);
    if (refs_json != mirror_refs.refs_json) {
        auto written = co_await store::write_all(p.mirror, "refs.json", std::move(refs_json), store::write_mode::replace);
        if (!written) {
            p.note_failure(with_context(written.error(), "mirror"), true);
            co_return;
        }
    }
    if (head && head != mirror_refs.head_bytes) {
        auto written = co_await store::write_all(p.mirror, "HEAD", *head, store::write_mode::replace);
        if (!written)
            p.note_failure(with_context(written.error(), "mirror"), true);
    } else if (origin_refs.head && !head) {
        p.report.warnings.push_back("HEAD: not written yet, what it names is not in the mirror");
    }
    // The origin publishes a HEAD no reader can follow: the mirror cannot copy it faithfully.
    if (origin_refs.head && origin_refs.head->symbolic && !origin_refs.refs.contains(*origin_refs.head->symbolic) &&
        !origin_refs.unsettled.contains(*origin_refs.head->symbolic))
        p.report.violations.push_back(make_error(sync_errc::refused_ref, "HEAD: names " + *origin_refs.head->symbolic +
                                                                             ", which does not exist at the origin"));
}

} // namespace mirror::sync::detail
