#include "core/sync/audit.hpp"

#include "core/sync/detail/audit_context.hpp"

#include "core/catalog/catalog_reader.hpp"
#include "core/fdl/refs.hpp"
#include "core/fdl/repo_settings.hpp"
#include "core/fdl/small_files.hpp"
#include "core/fdl/version_record.hpp"
#include "core/io/errors.hpp"
#include "core/sync/errors.hpp"
#include "core/sync/inventory.hpp"
#include "core/sync/ledger.hpp"
#include "core/sync/limits.hpp"
#include "core/sync/workers.hpp"
#include "verify/errors.hpp"
#include "verify/sshsig.hpp"

#include <algorithm>
#include <ctime>
#include <functional>
#include <set>

namespace mirror::sync {

std::string_view role_name(file_role role) {
    switch (role) {
    case file_role::fdl_json: return "fdl.json";
    case file_role::head: return "HEAD";
    case file_role::refs_json: return "refs.json";
    case file_role::version_json: return "version.json";
    case file_role::signature: return "version.json.sig";
    case file_role::expired_json: return "expired.json";
    case file_role::catalog: return "catalog";
    case file_role::other_catalog: return "other_catalog";
    case file_role::dataset_json: return "dataset.json";
    case file_role::files_json: return "files.json";
    case file_role::data_file: return "data_file";
    }
    return "unknown";
}

std::string_view voucher_name(file_voucher voucher) {
    switch (voucher) {
    case file_voucher::computed: return "computed";
    case file_voucher::signature: return "version.json.sig";
    case file_voucher::version_json: return "version.json";
    case file_voucher::ledger: return "ledger";
    case file_voucher::catalog: return "catalog";
    case file_voucher::files_json: return "files.json";
    case file_voucher::observed: return "observed";
    }
    return "unknown";
}

int audit_report::exit_code() const {
    if (io_failure || (fatal && fatal->code.category() == io::store_category() &&
                       fatal->code != io::store_errc::too_large))
        return 3;
    if (fatal || !problems.empty())
        return 1;
    for (auto const& v : versions)
        if (!v.problems.empty())
            return 1;
    return 0;
}

namespace {

using detail::audit_context;
using detail::noted;

/// What the audit fetched of a version's signature: a stat when the policy is off (looked
/// at, not read), else its bytes if present.
struct fetched_signature {
    std::optional<result<store::object_info>> present;
    std::optional<result<std::optional<std::string>>> armored;
};

awaitable<fetched_signature> fetch_signature(audit_context& c, std::string key) {
    fetched_signature out;
    if (c.options.trust.policy == verify::signature_policy::off)
        out.present = co_await c.repo.stat(key);
    else
        out.armored = co_await store::read_if_present(c.repo, key, verify::max_signature_bytes);
    co_return out;
}

/// The version's signature under the audit's policy: its status, its signer, and a
/// problem when the policy is not met.
void check_signature(audit_context& c, version_audit& v, std::string const& folder, std::string const& record,
                     fetched_signature const& fetched) {
    std::string key = folder + "version.json.sig";
    if (fetched.present) {
        auto const& present = *fetched.present;
        if (!present && present.error().code != io::store_errc::not_found) {
            v.problems.push_back(noted(c, present.error()));
            v.signature = "unreadable";
            v.files.push_back({key, file_role::signature, std::nullopt, std::nullopt, file_voucher::observed, false});
        } else {
            v.signature = present ? "not checked" : "missing";
            if (present) // looked at, not read
                v.files.push_back({key, file_role::signature, present->size, std::nullopt, file_voucher::observed});
        }
        return;
    }
    auto const& armored = *fetched.armored;
    if (!armored) {
        v.problems.push_back(noted(c, armored.error()));
        v.signature = "unreadable";
        v.files.push_back({key, file_role::signature, std::nullopt, std::nullopt, file_voucher::computed, false});
        return;
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
    if (*armored) // its bytes are the evidence whether or not they verified
        v.files.push_back({key, file_role::signature, (*armored)->size(), verify::sha256_of(**armored),
                           file_voucher::computed, v.signer.has_value()});
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
    // version.json, expired.json and the signature at once: one round trip, not three,
    // against a distant store (the signature is read even when expiry makes it moot).
    std::optional<result<std::string>> read_record, read_expired;
    fetched_signature signature;
    std::size_t next_read = 0;
    std::function<awaitable<void>()> reader = [&]() -> awaitable<void> {
        while (next_read < 3) {
            switch (next_read++) {
            case 0:
                read_record = co_await store::read_all(c.repo, key, limits::version_json);
                break;
            case 1:
                read_expired = co_await store::read_all(c.repo, folder + "expired.json", limits::expired_json);
                break;
            default:
                signature = co_await fetch_signature(c, folder + "version.json.sig");
                break;
            }
        }
    };
    co_await run_workers(std::min<std::size_t>(std::max<std::size_t>(1, c.options.concurrency), 3), reader);
    auto& bytes = *read_record;
    if (!bytes) {
        v.problems.push_back(noted(c, bytes.error()));
        v.files.push_back({key, file_role::version_json, std::nullopt, std::nullopt, file_voucher::computed, false});
        co_return std::nullopt;
    }
    // Nothing pins version.json: its digest is computed here, and a verified signature vouches for it.
    v.files.push_back({key, file_role::version_json, bytes->size(), verify::sha256_of(*bytes), file_voucher::computed});
    auto record = fdl::parse_version_record(*bytes, key);
    if (!record) {
        v.problems.push_back(record.error());
        co_return std::nullopt;
    }
    v.seq = record->seq;
    if (auto same = fdl::check_record_folder(*record, v.id, key); !same)
        v.problems.push_back(same.error());

    auto& expired_bytes = *read_expired;
    if (expired_bytes) {
        v.files.push_back({folder + "expired.json", file_role::expired_json, expired_bytes->size(),
                           verify::sha256_of(*expired_bytes), file_voucher::computed});
        auto expiry = fdl::parse_expiry(*expired_bytes, folder + "expired.json");
        if (!expiry)
            v.problems.push_back(expiry.error());
        v.expired = true;
        v.withdrawn = expiry && expiry->withdrawn();
    } else if (expired_bytes.error().code != io::store_errc::not_found) {
        v.problems.push_back(noted(c, expired_bytes.error()));
        v.files.push_back({folder + "expired.json", file_role::expired_json, std::nullopt, std::nullopt,
                           file_voucher::computed, false});
    }

    if (v.withdrawn)
        v.signature = "not checked (withdrawn: its record was reduced)";
    else
        check_signature(c, v, folder, *bytes, signature);
    if (v.signer)
        v.files.front().vouched_by = file_voucher::signature; // version.json's entry

    if (!v.expired)
        co_await detail::audit_live_contents(c, v, folder, *record);
    co_return record->first_parent();
}

/// Whether the version's folder is not there at all: its version.json not found, the only
/// thing the audit tried.
bool is_absent(version_audit const& v) {
    return v.problems.size() == 1 && v.problems.front().code == sync_errc::missing_file && v.files.size() == 1 &&
           v.files.front().role == file_role::version_json && !v.files.front().ok;
}

/// A shallow mirror's versions no ref reaches through the versions it holds: those a ref
/// moved past by more than the depth left behind. They are audited all the same, found by
/// listing (a repository that cannot list leaves them unaudited, warned).
awaitable<void> audit_unreached(audit_context& c, std::map<std::string, std::size_t, std::less<>> const& audited) {
    if (!c.repo.caps().can_list) {
        c.report.warnings.push_back("a shallow mirror that cannot be listed: versions no ref reaches are not audited");
        co_return;
    }
    // Within the share a version may take (the audit holds the listing while it checks them).
    auto listed = co_await list_versions(c.repo, c.options.version_memory != 0 ? c.options.version_memory : SIZE_MAX);
    if (!listed) {
        c.report.problems.push_back(noted(c, listed.error()));
        co_return;
    }
    for (auto const& [id, files] : listed->versions) {
        if (audited.contains(id) || !files.contains("version.json"))
            continue;
        version_audit unreached{id};
        auto parent = co_await audit_version(c, unreached);
        c.report.versions.push_back(std::move(unreached));
        if (parent && !parent->empty() && !listed->is_published(*parent) &&
            std::ranges::find(c.report.parents_not_held, *parent) == c.report.parents_not_held.end())
            c.report.parents_not_held.push_back(*parent);
    }
}

/// A manifest entry for bytes the audit read whole and nothing pins.
audited_file read_entry(std::string key, file_role role, std::string_view bytes) {
    return {std::move(key), role, bytes.size(), verify::sha256_of(bytes), file_voucher::computed};
}

/// The refs, HEAD and refs.json as read, for the report.
void note_refs(audit_report& report, refs_snapshot const& refs) {
    report.refs = refs.refs;
    if (refs.head)
        report.head = refs.head->symbolic ? refs.head->symbolic : refs.head->detached;
    if (refs.head_bytes)
        report.files.push_back(read_entry("HEAD", file_role::head, *refs.head_bytes));
    if (refs.refs_json)
        report.files.push_back(read_entry("refs.json", file_role::refs_json, *refs.refs_json));
}

void check_refs(audit_context& c, refs_snapshot const& refs) {
    c.report.problems.insert(c.report.problems.end(), refs.refused.begin(), refs.refused.end());
    for (auto const& [name, why] : refs.unsettled) // an audit reads once: unreadable twice is a problem
        c.report.problems.push_back(why);
    for (auto const& warning : refs.warnings)
        c.report.problems.push_back(make_error(sync_errc::refused_ref, warning));
    if (!refs.head_bytes) {
        c.report.problems.push_back(make_error(io::store_errc::not_found, "HEAD: missing"));
    } else if (refs.head && refs.head->symbolic && !refs.refs.contains(*refs.head->symbolic)) {
        c.report.problems.push_back(
            make_error(sync_errc::refused_ref, "HEAD: names " + *refs.head->symbolic + ", which does not exist"));
    }
    if (!refs.refs_json)
        c.report.problems.push_back(make_error(io::store_errc::not_found, "refs.json: missing"));
}

} // namespace

awaitable<audit_report> run_audit(store::store& repo, sync_observer* observer, io::blocking_pool* pool,
                                  audit_options options) {
    auto started = std::chrono::steady_clock::now();
    audit_report report;
    audit_context c{repo, observer, pool, report, {}, {}, {}, {}, {}, options, static_cast<std::int64_t>(std::time(nullptr))};
    auto finish = [&]() {
        report.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
        return std::move(report);
    };
    for (auto const& skipped : options.trust.signers.skipped)
        report.warnings.push_back(verify::skipped_line_warning(skipped));
    report.started_at = c.now;
    auto fdl_bytes = co_await store::read_all(repo, "fdl.json", limits::fdl_json);
    if (!fdl_bytes) {
        report.fatal = fdl_bytes.error();
        co_return finish();
    }
    report.files.push_back(read_entry("fdl.json", file_role::fdl_json, *fdl_bytes));
    auto settings = fdl::parse_repo_settings(*fdl_bytes);
    if (!settings) {
        report.fatal = settings.error();
        co_return finish();
    }
    c.settings = std::move(*settings);
    if (!catalog::reader_available())
        report.warnings.push_back("no catalog reader in this build (built without DuckDB): data files are taken "
                                  "from files.json, and catalogs are not checked");
    ref_limits limits;
    if (options.version_memory != 0) // refs.json within the share a version may take
        limits.max_refs_json_tree_bytes = std::max<std::uint64_t>(options.version_memory / 2, std::uint64_t{4} << 20);
    auto refs = co_await read_refs(repo, "repository", limits);
    if (!refs) {
        report.fatal = refs.error();
        co_return finish();
    }
    check_refs(c, *refs);
    note_refs(report, *refs);
    if (auto partial = co_await read_partial_record(repo); partial)
        report.partial = std::move(*partial);
    else
        report.problems.push_back(noted(c, partial.error()));
    if (repo.caps().can_list) {
        auto listed = co_await list_data_sizes(repo, c.settings.data_dir,
                                               c.options.version_memory != 0 ? c.options.version_memory : SIZE_MAX);
        if (!listed) {
            report.fatal = listed.error();
            co_return finish();
        }
        c.data = std::move(*listed);
        ledger_reads const reads{c.options.concurrency, nullptr, c.options.version_memory}; // one version's share
        auto ledger = co_await load_ledger_index(repo, reads);
        if (ledger)
            c.ledger = std::move(*ledger);
        else
            report.problems.push_back(noted(c, ledger.error()));
    }

    if (c.options.only_version) {
        version_audit audited{*c.options.only_version};
        for (auto const& [name, target] : refs->refs)
            if (target == audited.id)
                audited.reached_from.push_back(name);
        co_await audit_version(c, audited);
        report.versions.push_back(std::move(audited));
        summarise_trust(c);
        co_return finish();
    }
    bool const shallow = report.partial && report.partial->depth;
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
            version_audit audited{*current};
            audited.reached_from.push_back(name);
            auto parent = co_await audit_version(c, audited);
            if (in_chain.size() > 1 && shallow && is_absent(audited)) {
                // Below a shallow mirror's window: expected, and where this line ends.
                if (std::ranges::find(report.parents_not_held, audited.id) == report.parents_not_held.end())
                    report.parents_not_held.push_back(audited.id);
                break;
            }
            index_of.emplace(audited.id, report.versions.size());
            parents[audited.id] = parent;
            current = std::move(parent);
            report.versions.push_back(std::move(audited));
        }
    }
    if (shallow)
        co_await audit_unreached(c, index_of);
    summarise_trust(c);
    co_return finish();
}

} // namespace mirror::sync
