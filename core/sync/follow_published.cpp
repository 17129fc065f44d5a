// Versions the mirror published in earlier passes: follow the late changes the spec
// allows (expired.json, version.json.sig, catalogs/<format>.duckdb) and report any other
// change as a violation, keeping the mirror's copy.

#include "core/catalog/compare.hpp"
#include "core/catalog/errors.hpp"
#include "core/fdl/small_files.hpp"
#include "core/fdl/version_record.hpp"
#include "core/io/errors.hpp"
#include "core/sync/catalog_check.hpp"
#include "core/sync/copy.hpp"
#include "core/sync/detail/pass.hpp"
#include "core/sync/errors.hpp"
#include "core/sync/limits.hpp"
#include "verify/sshsig.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

namespace mirror::sync::detail {

namespace {

bool is_late_addition(std::string_view path) {
    return path == "version.json.sig" || (path.starts_with("catalogs/") && path.ends_with(".duckdb"));
}

/// True when `reduced` only removes fields from `original` (a withdrawal may delete what
/// it withdraws from version.json, and change nothing else).
bool only_removes_fields(std::string_view original, std::string_view reduced) {
    boost::system::error_code ec_original, ec_reduced;
    auto before = boost::json::parse(original, ec_original);
    auto after = boost::json::parse(reduced, ec_reduced);
    if (ec_original || ec_reduced || !before.is_object() || !after.is_object())
        return false;
    for (auto const& [key, value] : after.get_object()) {
        auto const* kept = before.get_object().if_contains(key);
        if (kept == nullptr || *kept != value)
            return false;
    }
    return true;
}

/// Whether a version expired at the origin still needs expiry work in the mirror:
/// no mark yet, a file the origin deleted still here, or another version.json.
bool expiry_pending(folder_files const& served, folder_files const& held) {
    if (!held.contains("expired.json"))
        return true;
    // What expiry deletes: the catalog (named .duckdb by every writer we know; the exact
    // name is in version.json, which follow_expiry reads), files.json and catalogs/*.
    for (auto const& [path, size] : held)
        if (!served.contains(path) &&
            (path.ends_with(".duckdb") || path == "files.json" || path.starts_with("catalogs/")))
            return true;
    return served.contains("version.json") && served.at("version.json") != held.at("version.json");
}

/// Brings a version the origin expired or withdrew to the same state in the mirror, in an
/// order that is safe to interrupt and to repeat: the origin's expired.json first, then
/// the deletion of the catalog, files.json and catalogs/*, then, for a withdrawal, the
/// origin's reduced version.json.
awaitable<void> follow_expiry(pass& p, std::string const& id, folder_files const& served, folder_files const& held) {
    std::string folder = "versions/" + id + "/";
    auto expired_bytes = co_await store::read_all(p.origin, folder + "expired.json", limits::expired_json);
    if (!expired_bytes) {
        auto e = origin_read_error(expired_bytes.error());
        p.note_failure(e, false);
        p.report.warnings.push_back("could not follow expiry: " + e.message);
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

    bool changed = false;
    if (!held.contains("expired.json")) {
        changed = true;
        // The mark first: a reader who sees the catalog gone also sees why.
        auto marked = co_await store::write_all(p.mirror, folder + "expired.json", std::move(*expired_bytes),
                                                store::write_mode::create_only);
        if (!marked && marked.error().code != io::store_errc::already_exists) {
            p.note_failure(with_context(marked.error(), "mirror"), true);
            co_return;
        }
    }
    std::vector<std::string> doomed;
    for (auto const& [path, size] : held) {
        bool expiry_deletes = path.starts_with("catalogs/") ||
                              (mirror_record && mirror_record->catalog && path == mirror_record->catalog->path) ||
                              (mirror_record && mirror_record->files && path == mirror_record->files->path);
        if (expiry_deletes && !served.contains(path))
            doomed.push_back(path);
    }
    changed = changed || !doomed.empty();
    for (auto const& path : doomed) {
        auto removed = co_await p.mirror.remove(folder + path);
        if (!removed && removed.error().code != io::store_errc::not_found) {
            p.note_failure(with_context(removed.error(), "mirror"), true);
            co_return;
        }
    }
    auto const* origin = co_await load_origin_record(p, id);
    if (*origin && (*origin)->bytes != *mirror_record_bytes) {
        if (!expiry->withdrawn() || !only_removes_fields(*mirror_record_bytes, (*origin)->bytes)) {
            p.report.violations.push_back(make_error(
                sync_errc::version_rewritten,
                folder + "version.json: the origin changed it beyond removing withdrawn fields (the mirror keeps its copy)"));
        } else {
            auto replaced = co_await store::write_all(p.mirror, folder + "version.json", (*origin)->bytes,
                                                      store::write_mode::replace);
            if (!replaced) {
                p.note_failure(with_context(replaced.error(), "mirror"), true);
                co_return;
            }
            changed = true;
        }
    } else if (!*origin) {
        p.report.warnings.push_back("expired " + id + ": " + (*origin).error().message);
    }
    if (changed)
        p.report.followed.push_back("versions/" + id + (expiry->withdrawn() ? ": withdrawn" : ": expired"));
}

/// A signature added after the version was published: checked against the mirror's
/// version.json like any other before it is added; one that fails is not added, and the
/// version is reported unverified (exit 1).
awaitable<void> take_late_signature(pass& p, std::string const& id) {
    std::string folder = "versions/" + id + "/";
    auto armored = co_await read_origin_signature(p, id);
    if (!armored || !*armored) {
        if (!armored) {
            p.note_failure(armored.error(), false);
            p.report.warnings.push_back(folder + "version.json.sig: added at the origin, not taken: " +
                                        armored.error().message);
        }
        co_return;
    }
    auto const signature_bytes = (*armored)->size();
    auto record = co_await store::read_all(p.mirror, folder + "version.json", limits::version_json);
    if (!record) {
        p.note_failure(with_context(record.error(), "mirror"), true);
        co_return;
    }
    std::optional<std::string_view> signature = **armored;
    auto signer = verify::check_version_signature(p.options.trust, *record, signature, p.now);
    if (!signer) {
        // Were the version new, this signature would hold it (an invalid one blocks under
        // every policy that checks): a problem of the published version, as verify counts it.
        p.report.unverified.push_back(
            {id, error{signer.error().code,
                       folder + "version.json.sig: added at the origin, not taken: " + signer.error().message}});
        co_return;
    }
    auto written = co_await store::write_all(p.mirror, folder + "version.json.sig", std::move(**armored),
                                             store::write_mode::create_only);
    if (!written) {
        p.note_failure(with_context(written.error(), "mirror"), true);
        co_return;
    }
    if (*signer)
        p.report.signers[id] = **signer;
    p.report.files_copied += 1;
    p.report.bytes_copied += signature_bytes;
    p.report.followed.push_back(folder + "version.json.sig: added");
}

/// A published version's signature, which never changes once published: the origin's
/// bytes are compared with the mirror's (two signatures of one key have the same size, so
/// the listing's size cannot tell them apart).
awaitable<void> compare_signature(pass& p, std::string const& id) {
    std::string key = "versions/" + id + "/version.json.sig";
    auto origin = co_await read_origin_signature(p, id);
    if (!origin || !*origin) {
        if (!origin)
            p.note_failure(origin.error(), false);
        co_return; // a failed read is reported; a signature gone is found by the listing
    }
    auto held = co_await store::read_all(p.mirror, key, verify::max_signature_bytes);
    if (!held) {
        p.note_failure(with_context(held.error(), "mirror"), true);
        co_return;
    }
    if (*held != **origin)
        p.report.violations.push_back(make_error(
            sync_errc::version_rewritten,
            key + ": the origin now serves another signature than the one published (the mirror keeps its copy)"));
}

/// Holds a version the mirror published to the signature policy of this pass: a policy
/// tightened since (off to if-present or required), or keys revoked, leave versions in the
/// mirror that it would not publish today; each is reported (`unverified`).
awaitable<void> check_published_signature(pass& p, std::string const& id) {
    std::string folder = "versions/" + id + "/";
    auto record = co_await store::read_all(p.mirror, folder + "version.json", limits::version_json);
    if (!record) {
        p.note_failure(with_context(record.error(), "mirror"), true);
        co_return;
    }
    auto armored = co_await store::read_if_present(p.mirror, folder + "version.json.sig", verify::max_signature_bytes);
    if (!armored) {
        p.note_failure(with_context(armored.error(), "mirror"), true);
        co_return;
    }
    std::optional<std::string_view> signature;
    if (*armored)
        signature = **armored;
    auto signer = verify::check_version_signature(p.options.trust, *record, signature, p.now);
    if (!signer)
        p.report.unverified.push_back({id, with_context(signer.error(), "versions/" + id)});
}

/// A catalog in another format added to a published version must reference the same data
/// files as the version's catalog, as the mirror holds it. Returns the copy checked (in
/// the scratch folder) to publish, or nullptr when it is refused (reported).
awaitable<store::store*> check_late_catalog(pass& p, std::string const& folder, std::string const& path,
                                            std::uint64_t size) {
    std::string record_key = folder + "version.json";
    auto bytes = co_await store::read_all(p.mirror, record_key, limits::version_json);
    if (!bytes) {
        p.note_failure(with_context(bytes.error(), "mirror"), true);
        co_return nullptr;
    }
    auto record = fdl::parse_version_record(*bytes, record_key);
    if (!record || !record->catalog) {
        p.report.warnings.push_back(folder + path + ": added at the origin, not taken: the mirror's version.json " +
                                    "pins no catalog to compare it with");
        co_return nullptr;
    }
    expectation pinned{record->catalog->bytes, record->catalog->sha256, "version.json"};
    std::vector<std::uint64_t> none;
    std::string catalog_key = folder + record->catalog->path;
    auto main = co_await fetch_catalog(p.mirror, catalog_key, pinned, none, p.scratch, p.options.catalogs,
                                       p.options.pool);
    auto not_taken = [&](error const& why) {
        if (p.scratch.failed())
            p.note_failure(why, true);
        else
            p.report.warnings.push_back(folder + path + ": added at the origin, not taken: " + why.message);
    };
    if (!main) {
        not_taken(main.error());
        co_return nullptr;
    }
    expectation listed_size{size, {}, "the origin's listing"};
    std::string key = folder + path;
    auto other = co_await fetch_catalog(p.origin, key, listed_size, none, p.scratch, p.options.catalogs,
                                        p.options.pool);
    if (!other) {
        not_taken(other.error());
        co_return nullptr;
    }
    auto problems = catalog::compare_catalogs(*main, *other, *declared_format(path), folder + path);
    if (!problems.empty()) {
        p.report.violations.push_back(first_of(problems));
        co_return nullptr;
    }
    auto copies = p.scratch.files();
    co_return copies ? *copies : nullptr;
}

awaitable<void> take_late_addition(pass& p, std::string const& folder, std::string const& path, std::uint64_t size) {
    store::store* source = &p.origin;
    if (catalog::reader_available() && declared_format(path)) {
        source = co_await check_late_catalog(p, folder, path, size);
        if (source == nullptr)
            co_return;
    }
    // Named locals, not braced temporaries of the co_await expression: GCC 12
    // destroyed those twice here (see docs/design.md, "Coroutines and GCC 12").
    expectation listed_size{size, {}, "the origin's listing"};
    std::string key = folder + path;
    bool on_mirror = false;
    auto copied = co_await copy_object(*source, p.mirror, key, listed_size, store::write_mode::create_only, on_mirror,
                                       p.observer, p.options.pool);
    p.scratch.forget(folder);
    if (!copied) {
        if (!p.note_failure(copied.error(), on_mirror))
            p.report.warnings.push_back("could not take " + key + ": " + copied.error().message);
        co_return;
    }
    p.report.files_copied += 1;
    p.report.bytes_copied += copied->bytes;
    p.report.followed.push_back(key + ": added");
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
    if (served->contains("expired.json")) {
        if (expiry_pending(*served, held))
            co_await follow_expiry(p, id, *served, held);
        co_return; // an expired version changes only by expiry
    }
    if (held.contains("expired.json")) {
        p.report.violations.push_back(make_error(
            sync_errc::file_deleted_at_origin, folder + "expired.json: gone from the origin (the mirror keeps it)"));
        co_return;
    }
    for (auto const& [path, size] : *served) {
        auto have = held.find(path);
        if (have == held.end()) {
            if (path == "version.json.sig" && p.options.trust.policy != verify::signature_policy::off)
                co_await take_late_signature(p, id);
            else if (is_late_addition(path))
                co_await take_late_addition(p, folder, path, size);
            else
                p.report.violations.push_back(make_error(
                    sync_errc::file_added_at_origin,
                    folder + path + ": added at the origin after the version was published (not copied)"));
            if (p.mirror_failure)
                co_return;
        } else if (have->second != size) {
            p.report.violations.push_back(make_error(
                sync_errc::version_rewritten, folder + path + ": the origin now serves " + std::to_string(size) +
                                                  " bytes, the mirror's copy has " + std::to_string(have->second) +
                                                  " (the mirror keeps its copy)"));
        } else if (path == "version.json.sig") {
            co_await compare_signature(p, id);
        }
        if (p.mirror_failure)
            co_return;
    }
    if (p.options.trust.policy != verify::signature_policy::off)
        co_await check_published_signature(p, id);
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
