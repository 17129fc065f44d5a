// Versions the mirror published in earlier passes: follow the late changes the spec
// allows (expired.json, version.json.sig, catalogs/<format>.duckdb) and report any other
// change as a violation, keeping the mirror's copy.

#include "core/fdl/small_files.hpp"
#include "core/store/errors.hpp"
#include "core/sync/copy.hpp"
#include "core/sync/detail/pass.hpp"
#include "core/sync/errors.hpp"
#include "core/sync/limits.hpp"

namespace mirror::sync::detail {

namespace {

bool is_late_addition(std::string_view path) {
    return path == "version.json.sig" || (path.starts_with("catalogs/") && path.ends_with(".duckdb"));
}

/// Adds the origin's expired.json, then deletes the mirror's catalog, files.json and
/// catalogs/*; for a withdrawal, also takes the origin's reduced version.json.
awaitable<void> follow_expiry(pass& p, std::string const& id, folder_files const& held) {
    std::string folder = "versions/" + id + "/";
    auto expired_bytes = co_await store::read_all(p.origin, folder + "expired.json", limits::expired_json);
    if (!expired_bytes) {
        p.note_failure(origin_read_error(expired_bytes.error()), false);
        p.report.warnings.push_back("could not follow expiry: " + origin_read_error(expired_bytes.error()).message);
        co_return;
    }
    auto expiry = fdl::parse_expiry(*expired_bytes, folder + "expired.json");
    if (!expiry) {
        p.report.violations.push_back(expiry.error());
        co_return;
    }
    auto mirror_record_bytes = co_await store::read_all(p.mirror, folder + "version.json", limits::version_json);
    if (!mirror_record_bytes) {
        p.note_failure(with_context(mirror_record_bytes.error(), "mirror"), true);
        co_return;
    }
    auto mirror_record = fdl::parse_version_record(*mirror_record_bytes, "mirror: " + folder + "version.json");

    // The mark first: a reader who sees the catalog gone also sees why.
    auto marked = co_await store::write_all(p.mirror, folder + "expired.json", std::move(*expired_bytes),
                                            store::write_mode::create_only);
    if (!marked && marked.error().code != store::store_errc::already_exists) {
        p.note_failure(with_context(marked.error(), "mirror"), true);
        co_return;
    }
    std::vector<std::string> doomed;
    if (mirror_record && mirror_record->catalog)
        doomed.push_back(mirror_record->catalog->path);
    if (mirror_record && mirror_record->files)
        doomed.push_back(mirror_record->files->path);
    for (auto const& [path, size] : held)
        if (path.starts_with("catalogs/"))
            doomed.push_back(path);
    for (auto const& path : doomed) {
        auto removed = co_await p.mirror.remove(folder + path);
        if (!removed && removed.error().code != store::store_errc::not_found) {
            p.note_failure(with_context(removed.error(), "mirror"), true);
            co_return;
        }
    }
    if (expiry->withdrawn()) {
        auto const* origin = co_await load_origin_record(p, id);
        if (*origin && (*origin)->bytes != *mirror_record_bytes) {
            auto replaced = co_await store::write_all(p.mirror, folder + "version.json", (*origin)->bytes,
                                                      store::write_mode::replace);
            if (!replaced) {
                p.note_failure(with_context(replaced.error(), "mirror"), true);
                co_return;
            }
        } else if (!*origin) {
            p.report.warnings.push_back("withdrawn " + id + ": " + (*origin).error().message);
        }
    }
    p.report.followed.push_back(folder + (expiry->withdrawn() ? ": withdrawn" : ": expired"));
}

awaitable<void> follow_one(pass& p, std::string const& id, folder_files const& held) {
    std::string folder = "versions/" + id + "/";
    auto const* served = p.origin_versions->files_of(id);
    if (served == nullptr || !served->contains("version.json")) {
        p.report.violations.push_back(
            make_error(sync_errc::file_deleted_at_origin,
                       folder + "version.json: gone from the origin (the mirror keeps the version)"));
        co_return;
    }
    bool mirror_expired = held.contains("expired.json");
    if (served->contains("expired.json") && !mirror_expired) {
        co_await follow_expiry(p, id, held);
        co_return;
    }
    for (auto const& [path, size] : *served) {
        auto have = held.find(path);
        if (have == held.end()) {
            if (!is_late_addition(path) || mirror_expired) {
                p.report.violations.push_back(make_error(
                    sync_errc::file_added_at_origin,
                    folder + path + ": added at the origin after the version was published (not copied)"));
                continue;
            }
            // Named locals, not braced temporaries of the co_await expression: GCC 12
            // destroyed those twice here (see docs/design.md, "Coroutines and GCC 12").
            expectation listed_size{size, {}, "the origin's listing"};
            std::string key = folder + path;
            auto copied = co_await copy_object(p.origin, p.mirror, key, listed_size, store::write_mode::create_only,
                                               p.observer, p.options.pool);
            if (!copied) {
                if (p.note_failure(copied.error(), is_mirror_failure(copied.error())))
                    co_return;
                p.report.warnings.push_back("could not take " + folder + path + ": " + copied.error().message);
                continue;
            }
            p.report.files_copied += 1;
            p.report.bytes_copied += copied->bytes;
            p.report.followed.push_back(folder + path + ": added");
        } else if (have->second != size) {
            p.report.violations.push_back(make_error(
                sync_errc::version_rewritten, folder + path + ": the origin now serves " + std::to_string(size) +
                                                  " bytes, the mirror's copy has " + std::to_string(have->second) +
                                                  " (the mirror keeps its copy)"));
        }
    }
    if (mirror_expired)
        co_return; // what expiry deleted is expected to be gone at the origin too
    for (auto const& [path, size] : held)
        if (!served->contains(path))
            p.report.violations.push_back(make_error(
                sync_errc::file_deleted_at_origin, folder + path + ": deleted at the origin (the mirror keeps it)"));
}

} // namespace

awaitable<void> follow_published(pass& p) {
    for (auto const& [id, held] : p.mirror_versions.versions) {
        if (p.mirror_failure)
            co_return;
        if (held.contains("version.json"))
            co_await follow_one(p, id, held);
    }
}

} // namespace mirror::sync::detail
