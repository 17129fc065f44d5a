#include "core/sync/audit.hpp"

#include "core/catalog/catalog_reader.hpp"
#include "core/catalog/errors.hpp"
#include "core/fdl/files_index.hpp"
#include "core/fdl/refs.hpp"
#include "core/fdl/repo_settings.hpp"
#include "core/fdl/small_files.hpp"
#include "core/fdl/version_record.hpp"
#include "core/store/errors.hpp"
#include "core/sync/copy.hpp"
#include "core/sync/errors.hpp"
#include "core/sync/inventory.hpp"
#include "core/sync/ledger.hpp"
#include "core/sync/limits.hpp"
#include "verify/errors.hpp"
#include "verify/sshsig.hpp"

#include <ctime>
#include <functional>

#include <set>

namespace mirror::sync {

int audit_report::exit_code() const {
    if (io_failure || (fatal && fatal->code.category() == store::store_category() &&
                       fatal->code != store::store_errc::too_large))
        return 3;
    if (fatal || !problems.empty())
        return 1;
    for (auto const& v : versions)
        if (!v.problems.empty())
            return 1;
    return 0;
}

namespace {

struct audit_context {
    store::store& repo;
    sync_observer* observer;
    store::blocking_pool* pool;
    audit_report& report;
    fdl::repo_settings settings;
    std::optional<std::map<std::string, std::uint64_t>> data; ///< data_dir listing, when it can list
    data_ledger ledger; ///< a mirror's record of its data files' digests; empty for an origin
    /// Data files hashed in this audit -> why they differ from the ledger (nullopt: equal).
    std::map<std::string, std::optional<error>, std::less<>> proven;
    audit_options const& options;
    std::int64_t now = 0;
    scratch_space scratch{options.catalogs.scratch_parent, pool}; ///< private catalog copies
};

/// Reads a store error as a problem of the audited object, or an I/O failure.
error noted(audit_context& c, error e) {
    if (is_io_failure(e.code))
        c.report.io_failure = true;
    return as_content_error(std::move(e));
}

awaitable<void> check_data_files(audit_context& c, version_audit& v, std::vector<fdl::needed_data_file> const& files) {
    for (auto const& file : files) {
        std::string key = c.settings.data_dir + file.path;
        v.data_files += 1;
        v.data_bytes += file.bytes;
        std::optional<std::uint64_t> size;
        if (c.data) {
            if (auto it = c.data->find(file.path); it != c.data->end())
                size = it->second;
        } else if (auto found = co_await c.repo.stat(key)) {
            size = found->size;
        } else if (found.error().code != store::store_errc::not_found) {
            v.problems.push_back(noted(c, found.error()));
            continue;
        }
        if (!size) {
            v.problems.push_back(make_error(sync_errc::missing_file, key + ": missing"));
            continue;
        }
        if (*size != file.bytes) {
            v.problems.push_back(make_error(sync_errc::size_mismatch, key + ": size is " + std::to_string(*size) +
                                                                          " bytes, " + (v.data_source == "catalog" ? "the catalog" : v.data_source) + " says " +
                                                                          std::to_string(file.bytes)));
            continue;
        }
        // A mirror proves its bytes against the digest it recorded when it copied them.
        auto recorded = c.ledger.find(file.path);
        if (recorded == c.ledger.end())
            continue;
        if (auto known = c.proven.find(file.path); known != c.proven.end()) {
            // Shared with a version audited before: the same verdict, without reading again.
            if (!known->second)
                v.data_files_proven += 1;
            else
                v.problems.push_back(error{known->second->code, known->second->message + " (as above)"});
            continue;
        }
        expectation expect{recorded->second.bytes, recorded->second.sha256, "the mirror's ledger"};
        auto hashed = co_await hash_object(c.repo, key, expect, c.pool);
        if (!hashed) {
            auto problem = noted(c, hashed.error());
            c.proven.emplace(file.path, problem);
            v.problems.push_back(std::move(problem));
        } else {
            c.proven.emplace(file.path, std::nullopt);
            v.data_files_proven += 1;
        }
    }
}

/// Checks a pinned file; keeps its bytes when `keep` (files.json, dataset.json).
awaitable<std::optional<std::string>> check_pinned(audit_context& c, version_audit& v, std::string const& folder,
                                                  fdl::pinned_file const& pinned, bool keep, std::size_t limit) {
    std::string key = folder + pinned.path;
    expectation expect{pinned.bytes, pinned.sha256, "version.json"};
    if (keep) {
        auto bytes = co_await store::read_all(c.repo, key, limit);
        if (!bytes) {
            v.problems.push_back(noted(c, bytes.error()));
            co_return std::nullopt;
        }
        if (auto ok = check_bytes(*bytes, expect, key); !ok) {
            v.problems.push_back(ok.error());
            co_return std::nullopt;
        }
        co_return std::move(*bytes);
    }
    if (c.observer)
        c.observer->copying(key, pinned.bytes);
    auto hashed = co_await hash_object(c.repo, key, expect, c.pool);
    if (!hashed)
        v.problems.push_back(noted(c, hashed.error()));
    else if (c.observer)
        c.observer->copied(key, hashed->bytes);
    co_return std::nullopt;
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

/// The catalog, dataset.json, files.json and data files of a version that is not expired.
/// The catalog names the data files where this build reads catalogs; files.json otherwise.
awaitable<void> audit_live_contents(audit_context& c, version_audit& v, std::string const& folder,
                                    fdl::version_record const& record) {
    bool read_catalog = record.catalog && catalog::reader_available();
    if (!record.catalog)
        v.problems.push_back(make_error(sync_errc::missing_catalog, folder + "version.json: catalog: missing"));
    else if (!read_catalog) // the gate below checks size and digest while it copies
        co_await check_pinned(c, v, folder, *record.catalog, false, 0);
    if (record.catalog) {
        // DuckDB replays a .wal beside a catalog: readers would see another catalog.
        std::string wal = folder + record.catalog->path + ".wal";
        auto found = co_await c.repo.stat(wal);
        if (found)
            v.problems.push_back(make_error(catalog::catalog_errc::bad_catalog,
                                            wal + ": a write-ahead log beside the frozen catalog, which readers "
                                                  "would replay"));
        else if (found.error().code != store::store_errc::not_found)
            v.problems.push_back(noted(c, found.error()));
    }
    if (record.dataset) {
        auto dataset = co_await check_pinned(c, v, folder, *record.dataset, true, limits::dataset_json);
        if (dataset)
            if (auto parsed = fdl::parse_dataset(*dataset, folder + record.dataset->path); !parsed)
                v.problems.push_back(parsed.error());
    }
    std::optional<fdl::files_index> index;
    if (record.files) {
        std::string files_key = folder + record.files->path;
        auto files = co_await check_pinned(c, v, folder, *record.files, true, limits::files_json);
        if (files) {
            auto parsed = fdl::parse_files_index(*files, files_key);
            if (parsed)
                index = std::move(*parsed);
            else
                v.problems.push_back(parsed.error());
        }
    }
    if (read_catalog) {
        auto others = co_await other_catalogs(c, v, folder);
        bool scratch_failed = false;
        fdl::files_index const* checked_index = index ? &*index : nullptr;
        auto verdict = co_await check_version_catalogs(c.repo, folder, record, checked_index, others, c.scratch,
                                                       c.options.catalogs, c.pool, scratch_failed);
        c.scratch.forget(folder);
        if (!verdict) {
            v.problems.push_back(noted(c, verdict.error()));
            co_return;
        }
        v.catalog = summarise(verdict->contents);
        for (auto const& key : verdict->checked_copies)
            if (key.starts_with(folder + "catalogs/"))
                v.catalog->other_formats_checked.push_back(key.substr(folder.size()));
        v.problems.insert(v.problems.end(), verdict->problems.begin(), verdict->problems.end());
        v.tables = verdict->contents.tables.size();
        v.data_source = "catalog";
        co_await check_data_files(c, v, verdict->contents.needed);
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

/// The version's signature under the audit's policy: its status, its signer, and a
/// problem when the policy is not met.
awaitable<void> check_signature(audit_context& c, version_audit& v, std::string const& folder,
                                std::string const& record) {
    if (c.options.trust.policy == verify::signature_policy::off) {
        auto present = co_await c.repo.stat(folder + "version.json.sig");
        if (!present && present.error().code != store::store_errc::not_found) {
            v.problems.push_back(noted(c, present.error()));
            v.signature = "unreadable";
        } else {
            v.signature = present ? "not checked" : "missing";
        }
        co_return;
    }
    auto armored = co_await store::read_if_present(c.repo, folder + "version.json.sig", verify::max_signature_bytes);
    if (!armored) {
        v.problems.push_back(noted(c, armored.error()));
        v.signature = "unreadable";
        co_return;
    }
    std::optional<std::string_view> signature;
    if (*armored)
        signature = **armored;
    auto signer = verify::check_version_signature(c.options.trust, record, signature, c.now);
    if (!signer) {
        v.signature = verify::kind_name(static_cast<verify::verify_errc>(signer.error().code.value()));
        v.problems.push_back(with_context(signer.error(), "versions/" + v.id));
    } else if (*signer) {
        v.signature = "valid";
        v.signer = **signer;
    } else {
        v.signature = "missing";
    }
}

/// Per-key counts, unsigned versions, and what revoking `without_keys` would cost.
void summarise_trust(audit_context& c) {
    std::map<std::string, key_summary> by_key;
    if (c.options.trust.policy == verify::signature_policy::off)
        return; // nothing was checked: no trust to summarise
    for (auto const& v : c.report.versions) {
        if (!v.signer) {
            c.report.unsigned_versions.push_back(v.id);
            continue;
        }
        auto const& trusted = v.signer->trusted_key();
        auto& k = by_key[trusted];
        k.fingerprint = trusted;
        k.principals = v.signer->ca_fingerprint.empty() ? v.signer->principals : "certificate authority";
        k.versions += 1;
        k.newest = std::max(k.newest, v.id);
        for (auto const& revoked : c.options.without_keys)
            if (revoked == v.signer->fingerprint || revoked == v.signer->ca_fingerprint) {
                c.report.would_lose_trust.push_back(v.id);
                break;
            }
    }
    for (auto& [fingerprint, summary] : by_key)
        c.report.keys.push_back(std::move(summary));
}

awaitable<std::optional<std::string>> audit_version(audit_context& c, version_audit& v) {
    std::string folder = "versions/" + v.id + "/";
    std::string key = folder + "version.json";
    auto bytes = co_await store::read_all(c.repo, key, limits::version_json);
    if (!bytes) {
        v.problems.push_back(noted(c, bytes.error()));
        co_return std::nullopt;
    }
    auto record = fdl::parse_version_record(*bytes, key);
    if (!record) {
        v.problems.push_back(record.error());
        co_return std::nullopt;
    }
    v.seq = record->seq;
    if (auto same = fdl::check_record_folder(*record, v.id, key); !same)
        v.problems.push_back(same.error());

    auto expired_bytes = co_await store::read_all(c.repo, folder + "expired.json", limits::expired_json);
    if (expired_bytes) {
        auto expiry = fdl::parse_expiry(*expired_bytes, folder + "expired.json");
        if (!expiry)
            v.problems.push_back(expiry.error());
        v.expired = true;
        v.withdrawn = expiry && expiry->withdrawn();
    } else if (expired_bytes.error().code != store::store_errc::not_found) {
        v.problems.push_back(noted(c, expired_bytes.error()));
    }

    if (v.withdrawn)
        v.signature = "not checked (withdrawn: its record was reduced)";
    else
        co_await check_signature(c, v, folder, *bytes);

    if (!v.expired)
        co_await audit_live_contents(c, v, folder, *record);
    co_return record->first_parent();
}

void check_refs(audit_context& c, refs_snapshot const& refs) {
    c.report.problems.insert(c.report.problems.end(), refs.refused.begin(), refs.refused.end());
    for (auto const& warning : refs.warnings)
        c.report.problems.push_back(make_error(sync_errc::refused_ref, warning));
    if (!refs.head_bytes) {
        c.report.problems.push_back(make_error(store::store_errc::not_found, "HEAD: missing"));
    } else if (refs.head && refs.head->symbolic && !refs.refs.contains(*refs.head->symbolic)) {
        c.report.problems.push_back(
            make_error(sync_errc::refused_ref, "HEAD: names " + *refs.head->symbolic + ", which does not exist"));
    }
    if (!refs.refs_json)
        c.report.problems.push_back(make_error(store::store_errc::not_found, "refs.json: missing"));
}

} // namespace

awaitable<audit_report> run_audit(store::store& repo, sync_observer* observer, store::blocking_pool* pool,
                                  audit_options options) {
    auto started = std::chrono::steady_clock::now();
    audit_report report;
    audit_context c{repo, observer, pool, report, {}, {}, {}, {}, options, static_cast<std::int64_t>(std::time(nullptr))};
    auto finish = [&]() {
        report.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
        return std::move(report);
    };
    for (auto const& skipped : options.trust.signers.skipped)
        report.warnings.push_back(verify::skipped_line_warning(skipped));
    auto fdl_bytes = co_await store::read_all(repo, "fdl.json", limits::fdl_json);
    if (!fdl_bytes) {
        report.fatal = fdl_bytes.error();
        co_return finish();
    }
    auto settings = fdl::parse_repo_settings(*fdl_bytes);
    if (!settings) {
        report.fatal = settings.error();
        co_return finish();
    }
    c.settings = std::move(*settings);
    if (!catalog::reader_available())
        report.warnings.push_back("no catalog reader in this build (built without DuckDB): data files are taken "
                                  "from files.json, and catalogs are not checked");
    auto refs = co_await read_refs(repo, "repository");
    if (!refs) {
        report.fatal = refs.error();
        co_return finish();
    }
    check_refs(c, *refs);
    if (repo.caps().can_list) {
        auto listed = co_await list_data_files(repo, c.settings.data_dir);
        if (!listed) {
            report.fatal = listed.error();
            co_return finish();
        }
        c.data = std::move(*listed);
        auto ledger = co_await load_ledger(repo);
        if (ledger)
            c.ledger = std::move(*ledger);
        else
            report.problems.push_back(noted(c, ledger.error()));
    }

    std::map<std::string, std::size_t, std::less<>> index_of;
    std::map<std::string, std::optional<std::string>, std::less<>> parents; ///< of audited versions
    for (auto const& [name, target] : refs->refs) {
        std::optional<std::string> current = target;
        std::set<std::string, std::less<>> in_chain;
        while (current && !current->empty() && in_chain.size() < limits::history_length) {
            if (!in_chain.insert(*current).second) {
                report.problems.push_back(make_error(sync_errc::history_broken, name + ": parents form a cycle"));
                break;
            }
            if (auto seen = index_of.find(*current); seen != index_of.end()) {
                // Audited already: only note that this ref reaches it too, and go on.
                report.versions[seen->second].reached_from.push_back(name);
                current = parents[*current];
                continue;
            }
            index_of.emplace(*current, report.versions.size());
            report.versions.push_back({*current});
            report.versions.back().reached_from.push_back(name);
            // Audit through a copy: report.versions may grow while this version is audited.
            version_audit audited = report.versions.back();
            current = co_await audit_version(c, audited);
            parents[audited.id] = current;
            report.versions[index_of[audited.id]] = std::move(audited);
        }
    }
    summarise_trust(c);
    co_return finish();
}

} // namespace mirror::sync
