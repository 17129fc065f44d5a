// The audit of a live version's contents: its pinned files (catalog, dataset.json,
// files.json), its catalogs in other formats, and the data files it needs. Each file
// examined gets one manifest entry, made from what its check saw.

#include "core/sync/detail/audit_context.hpp"

#include "core/catalog/catalog_reader.hpp"
#include "core/catalog/errors.hpp"
#include "core/fdl/errors.hpp"
#include "core/fdl/files_index.hpp"
#include "core/fdl/json_limits.hpp"
#include "core/fdl/small_files.hpp"
#include "core/io/errors.hpp"
#include "core/sync/copy.hpp"
#include "core/sync/errors.hpp"
#include "core/sync/limits.hpp"
#include "core/sync/workers.hpp"

#include <algorithm>
#include <functional>
#include <iterator>

namespace mirror::sync::detail {

error noted(audit_context& c, error e) {
    if (is_io_failure(e.code))
        c.report.io_failure = true;
    return as_content_error(std::move(e));
}

namespace {

/// What the check of one data file found, kept apart from the version's report while
/// checks overlap, and entered in it in the catalog's order once all have finished.
struct data_file_check {
    audited_file entry;
    std::optional<error> problem; ///< at most one a file
    bool proven = false;          ///< hashed (now or earlier in the audit) and equal to the ledger
};

/// One data file: present under data_dir with the size `file` records; in a mirror, hashed
/// and compared with the ledger (once per audit: a shared file's verdict is reused).
/// Touches nothing of `v`: other checks of the version may be in flight.
awaitable<data_file_check> check_data_file(audit_context& c, version_audit const& v,
                                           fdl::needed_data_file const& file) {
    data_file_check out{{c.settings.data_dir + file.path, file_role::data_file, std::nullopt, std::nullopt,
                         v.data_source == "catalog" ? file_voucher::catalog : file_voucher::files_json, false}};
    audited_file& entry = out.entry;
    std::string const& key = entry.path;
    std::optional<std::uint64_t> size;
    if (c.data) {
        if (auto const* listed = c.data->find(file.path))
            size = *listed;
    } else if (auto found = co_await c.repo.stat(key)) {
        size = found->size;
    } else if (found.error().code != io::store_errc::not_found) {
        out.problem = noted(c, found.error());
        co_return out;
    }
    if (!size) {
        out.problem = make_error(sync_errc::missing_file, key + ": missing");
        co_return out;
    }
    entry.bytes = *size;
    if (*size != file.bytes) {
        std::string const says = v.data_source == "catalog" ? "the catalog" : v.data_source;
        out.problem = make_error(sync_errc::size_mismatch, key + ": size is " + std::to_string(*size) + " bytes, " +
                                                               says + " says " + std::to_string(file.bytes));
        co_return out;
    }
    entry.ok = true;
    // A mirror proves its bytes against the digest it recorded when it copied them.
    ledger_entry const* const pinned = c.ledger.find(file.path);
    if (pinned == nullptr)
        co_return out;
    entry.vouched_by = file_voucher::ledger;
    // Other checks in flight may add to c.proven meanwhile: no iterator into it is held
    // across a co_await. A version needs each path once (the catalog reader and
    // needed_files keep each once), so no two checks in flight hash the same file; one
    // shared with a version audited before finds its verdict here.
    if (c.proven.contains(pinned)) {
        // Shared with a version audited before: the same verdict, without reading again.
        out.proven = true;
        entry.sha256 = pinned->sha256;
        co_return out;
    }
    if (auto known = c.disproven.find(pinned); known != c.disproven.end()) {
        out.problem = error{known->second.code, known->second.message + " (as above)"};
        entry.ok = false;
        co_return out;
    }
    expectation expect{pinned->bytes, pinned->sha256, "the mirror's ledger"};
    auto hashed = co_await hash_object(c.repo, key, expect, c.pool);
    if (!hashed) {
        auto problem = noted(c, hashed.error());
        c.disproven.emplace(pinned, problem);
        out.problem = std::move(problem);
        entry.ok = false;
    } else {
        c.proven.insert(pinned);
        out.proven = true;
        entry.sha256 = hashed->sha256;
    }
    co_return out;
}

/// Checks a version's data files with up to `c.options.concurrency` checks in flight:
/// against a distant store each costs a round trip (a stat, or a read to hash), so they
/// overlap. The manifest entries and problems go into `v` in the order of `files`
/// whatever order the checks finish in, so the report is that of one check at a time.
awaitable<void> check_data_files(audit_context& c, version_audit& v, std::vector<fdl::needed_data_file> const& files) {
    std::vector<data_file_check> checked(files.size());
    std::size_t next = 0; // the next file to check, shared by the workers (all on the I/O thread)
    std::function<awaitable<void>()> worker = [&]() -> awaitable<void> {
        while (next < files.size()) {
            std::size_t const i = next++;
            auto done = co_await check_data_file(c, v, files[i]);
            checked[i] = std::move(done);
        }
    };
    co_await run_workers(std::min(std::max<std::size_t>(1, c.options.concurrency), files.size()), worker);
    std::vector<audited_file> entries;
    entries.reserve(files.size());
    for (std::size_t i = 0; i < files.size(); ++i) {
        v.data_files += 1;
        v.data_bytes += files[i].bytes;
        if (checked[i].proven)
            v.data_files_proven += 1;
        if (checked[i].problem)
            v.problems.push_back(std::move(*checked[i].problem));
        entries.push_back(std::move(checked[i].entry));
    }
    if (c.options.data_manifest && c.options.data_manifest->take(v.id, entries))
        co_return;
    v.files.insert(v.files.end(), std::make_move_iterator(entries.begin()), std::make_move_iterator(entries.end()));
}

/// Checks a pinned file; keeps its bytes when `keep` (files.json, dataset.json).
awaitable<std::optional<std::string>> check_pinned(audit_context& c, version_audit& v, std::string const& folder,
                                                  fdl::pinned_file const& pinned, file_role role, bool keep,
                                                  std::size_t limit) {
    std::string key = folder + pinned.path;
    expectation expect{pinned.bytes, pinned.sha256, "version.json"};
    audited_file entry{key, role, std::nullopt, std::nullopt, file_voucher::version_json, false};
    std::optional<std::string> kept;
    if (keep) {
        auto bytes = co_await store::read_all(c.repo, key, limit);
        if (!bytes) {
            v.problems.push_back(noted(c, bytes.error()));
        } else {
            // In memory already: its digest is the evidence even when it is not the pinned one.
            entry.bytes = bytes->size();
            entry.sha256 = verify::sha256_of(*bytes);
            if (auto ok = check_bytes(*bytes, expect, key); !ok) {
                v.problems.push_back(ok.error());
            } else {
                entry.ok = true;
                kept = std::move(*bytes);
            }
        }
        v.files.push_back(std::move(entry));
        co_return kept;
    }
    if (c.observer)
        c.observer->copying(key, pinned.bytes);
    auto hashed = co_await hash_object(c.repo, key, expect, c.pool);
    if (!hashed) {
        v.problems.push_back(noted(c, hashed.error()));
    } else {
        entry = {key, role, hashed->bytes, hashed->sha256, file_voucher::version_json, true};
        if (c.observer)
            c.observer->copied(key, hashed->bytes);
    }
    v.files.push_back(std::move(entry));
    co_return kept;
}

/// The catalogs in other formats a version has: listed where the repository can list,
/// else the formats fdl.json declares (absent ones are skipped by the gate).
awaitable<std::vector<other_catalog>> other_catalogs(audit_context& c, version_audit& v, std::string const& folder) {
    std::vector<other_catalog> paths;
    if (!c.repo.caps().can_list) {
        for (auto const& format : c.settings.catalog_formats)
            paths.push_back({"catalogs/" + format.ducklake + ".duckdb", std::nullopt});
        co_return paths;
    }
    std::string prefix = folder + "catalogs/";
    std::function<result<void>(store::list_entry)> each = [&](store::list_entry entry) -> result<void> {
        std::string path = entry.key.substr(folder.size());
        if (declared_format(path))
            paths.push_back({std::move(path), entry.size});
        return {};
    };
    auto listed = co_await c.repo.list(prefix, each);
    if (!listed)
        v.problems.push_back(noted(c, listed.error()));
    co_return paths;
}

catalog_summary summarise(catalog::catalog_contents const& contents) {
    catalog_summary out{contents.format, contents.last_snapshot, contents.tables.size()};
    for (auto const& t : contents.tables) {
        out.data_files += t.files.size();
        bool deletes = false;
        for (auto const& f : t.files)
            if (f.deletes) {
                out.delete_files += 1;
                deletes = true;
            }
        if (deletes)
            out.tables_with_deletes.push_back(t.name);
        if (t.renamed_columns)
            out.renamed_column_tables.push_back(t.name);
    }
    out.bytes = contents.total_bytes();
    for (auto const& view : contents.views)
        out.views.push_back(view.name);
    return out;
}

/// The catalog's manifest entry once the gate ran. The gate copies it into scratch space
/// checking size and digest against version.json: a verdict, or a failure to read a copy
/// that was made (a catalog_errc other than the size limit refusing it unread), means the
/// bytes are the pinned ones.
audited_file catalog_entry(audit_context const& c, std::string key, fdl::pinned_file const& pinned,
                           result<catalog_verdict> const& verdict) {
    bool copied = verdict.has_value();
    if (!copied) {
        auto code = verdict.error().code;
        bool refused_unread = code == catalog::catalog_errc::too_large && pinned.bytes > c.options.catalogs.max_bytes;
        copied = code.category() == catalog::catalog_category() && !refused_unread;
    }
    if (!copied)
        return {std::move(key), file_role::catalog, std::nullopt, std::nullopt, file_voucher::version_json, false};
    return {std::move(key), file_role::catalog, pinned.bytes, pinned.sha256, file_voucher::version_json, true};
}

} // namespace

namespace {

/// The catalog gate over an audited version, its catalogs in other formats with it, then
/// the data files the catalog names; each catalog's contents within `max_memory`.
awaitable<void> audit_by_catalog(audit_context& c, version_audit& v, std::string const& folder,
                                 fdl::version_record const& record, fdl::files_index const* index,
                                 std::vector<other_catalog> const& others, std::uint64_t max_memory) {
    auto verdict = co_await check_version_catalogs(c.repo, folder, record, index, others, c.scratch,
                                                   c.options.catalogs, c.pool, max_memory);
    c.scratch.forget(folder);
    v.files.push_back(catalog_entry(c, folder + record.catalog->path, *record.catalog, verdict));
    if (!verdict) {
        v.problems.push_back(noted(c, verdict.error()));
        co_return;
    }
    // Compared with the catalog, not pinned: their copies were hashed, the digests not kept.
    for (auto const& other : others) {
        bool checked = verdict->checked_copies.contains(folder + other.path);
        if (checked || other.bytes) // listed, or probed and found
            v.files.push_back({folder + other.path, file_role::other_catalog, other.bytes, std::nullopt,
                               file_voucher::observed, checked});
    }
    v.catalog = summarise(verdict->contents);
    for (auto const& key : verdict->checked_copies)
        if (key.starts_with(folder + "catalogs/"))
            v.catalog->other_formats_checked.push_back(key.substr(folder.size()));
    v.problems.insert(v.problems.end(), verdict->problems.begin(), verdict->problems.end());
    v.tables = verdict->contents.tables.size();
    v.data_source = "catalog";
    co_await check_data_files(c, v, verdict->contents.needed);
}

/// DuckDB replays a .wal beside a catalog: readers would see another catalog.
awaitable<void> check_no_wal(audit_context& c, version_audit& part, std::string const& folder,
                             fdl::version_record const& record) {
    if (!record.catalog)
        co_return;
    std::string wal = folder + record.catalog->path + ".wal";
    auto found = co_await c.repo.stat(wal);
    if (found)
        part.problems.push_back(make_error(catalog::catalog_errc::bad_catalog,
                                           wal + ": a write-ahead log beside the frozen catalog, which readers "
                                                 "would replay"));
    else if (found.error().code != io::store_errc::not_found)
        part.problems.push_back(noted(c, found.error()));
}

} // namespace

awaitable<void> audit_live_contents(audit_context& c, version_audit& v, std::string const& folder,
                                    fdl::version_record const& record) {
    bool read_catalog = record.catalog && catalog::reader_available();
    if (!record.catalog)
        v.problems.push_back(make_error(sync_errc::missing_catalog, folder + "version.json: catalog: missing"));
    else if (!read_catalog) // the gate below checks size and digest while it copies
        co_await check_pinned(c, v, folder, *record.catalog, file_role::catalog, false, 0);
    // The reads below do not depend on each other: against a distant store they go at once
    // (one round trip, not four). Each writes into a part of its own, merged afterwards in
    // the order of a read at a time, so the report is the same.
    version_audit wal_part, dataset_part, files_part, others_part;
    // What may be read whole and parsed (sync's gathering takes the same shares): a file
    // past it is hashed as it streams, and its version has the problem instead.
    std::uint64_t const allowed = c.options.version_memory;
    // files.json's tree and index come beside its text: it may have half.
    auto fits = [&](fdl::pinned_file const& pinned, std::uint64_t share, version_audit& part) {
        if (allowed == 0 || pinned.bytes <= share)
            return true;
        part.problems.push_back(make_error(sync_errc::over_memory_limit,
                                           folder + pinned.path + ": its text would take " +
                                               std::to_string(pinned.bytes >> 20) + " MiB of memory, more than the " +
                                               std::to_string(share >> 20) + " MiB this mirror allows it (memory_limit):"
                                               " hashed, not parsed"));
        return false;
    };
    std::optional<std::string> dataset, files;
    std::vector<other_catalog> others;
    std::size_t next_read = 0;
    std::function<awaitable<void>()> reader = [&]() -> awaitable<void> {
        while (next_read < 4) {
            switch (next_read++) {
            case 0:
                co_await check_no_wal(c, wal_part, folder, record);
                break;
            case 1:
                if (record.dataset)
                    dataset = co_await check_pinned(c, dataset_part, folder, *record.dataset, file_role::dataset_json,
                                                    fits(*record.dataset, allowed, dataset_part), limits::dataset_json);
                break;
            case 2:
                if (record.files)
                    files = co_await check_pinned(c, files_part, folder, *record.files, file_role::files_json,
                                                  fits(*record.files, allowed / 2, files_part), limits::files_json);
                break;
            default:
                if (read_catalog)
                    others = co_await other_catalogs(c, others_part, folder);
                break;
            }
        }
    };
    co_await run_workers(std::min<std::size_t>(std::max<std::size_t>(1, c.options.concurrency), 4), reader);
    auto merge = [&](version_audit& part) {
        v.problems.insert(v.problems.end(), part.problems.begin(), part.problems.end());
        v.files.insert(v.files.end(), part.files.begin(), part.files.end());
    };
    merge(wal_part);
    merge(dataset_part);
    if (dataset)
        if (auto parsed = fdl::parse_dataset(*dataset, folder + record.dataset->path); !parsed)
            v.problems.push_back(parsed.error());
    merge(files_part);
    std::optional<fdl::files_index> index;
    if (files) {
        std::string files_key = folder + record.files->path;
        std::size_t const tree_limit = allowed ? static_cast<std::size_t>(allowed / 4) : fdl::default_max_tree_bytes;
        auto parsed = fdl::parse_files_index(*files, files_key, tree_limit);
        if (parsed)
            index = std::move(*parsed);
        else if (parsed.error().code == fdl::fdl_errc::too_large)
            v.problems.push_back(make_error(sync_errc::over_memory_limit, parsed.error().message));
        else
            v.problems.push_back(parsed.error());
    }
    merge(others_part);
    if (read_catalog) {
        co_await audit_by_catalog(c, v, folder, record, index ? &*index : nullptr, others, allowed / 4);
        co_return;
    }
    if (!index) {
        if (!record.files)
            c.report.warnings.push_back(folder + ": no files.json and no catalog reader in this build; its data "
                                                 "files are not checked");
        co_return;
    }
    auto needed = fdl::needed_files(*index, folder + record.files->path);
    if (!needed) {
        v.problems.push_back(needed.error());
        co_return;
    }
    v.tables = index->tables.size();
    v.data_source = "files.json";
    co_await check_data_files(c, v, *needed);
}

} // namespace mirror::sync::detail
