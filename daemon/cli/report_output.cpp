#include "daemon/cli/report_output.hpp"

#include "daemon/build_info.hpp"
#include "daemon/common/terminal_text.hpp"

#include "core/catalog/catalog_reader.hpp"
#include "core/sync/errors.hpp"
#include "verify/sshsig.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <sys/resource.h>
#include <boost/json/value.hpp>

#include <openssl/crypto.h>

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace mirror::daemon {

namespace json = boost::json;

std::string human_bytes(std::uint64_t bytes) {
    static constexpr char const* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double value = static_cast<double>(bytes);
    int unit = 0;
    while (value >= 1024 && unit < 4)
        value /= 1024, ++unit;
    char text[32];
    std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
    return text;
}

build_facts this_build() {
    return {FDL_MIRROR_VERSION, verify::libssh_version(), catalog::reader_available(),
            OpenSSL_version(OPENSSL_VERSION_STRING)};
}

std::string utc_text(std::int64_t unix_seconds) {
    std::time_t t = static_cast<std::time_t>(unix_seconds);
    std::tm parts{};
    char text[32];
    if (gmtime_r(&t, &parts) == nullptr || std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts) == 0)
        return std::to_string(unix_seconds);
    return text;
}

static std::string seconds(std::chrono::milliseconds elapsed) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f s", static_cast<double>(elapsed.count()) / 1000.0);
    return text;
}

static json::object error_json(error const& e) {
    return {{"kind", sync::kind_of(e.code)}, {"message", e.message}};
}

static json::array errors_json(std::vector<error> const& errors) {
    json::array out;
    for (auto const& e : errors)
        out.push_back(error_json(e));
    return out;
}

static json::array strings_json(std::vector<std::string> const& items) {
    return json::array(items.begin(), items.end());
}

std::string sync_summary(sync::sync_report const& r, std::string const& origin, std::string const& mirror) {
    std::string out = "sync " + origin + " -> " + mirror + "\n";
    if (r.fatal)
        out += "stopped: " + r.fatal->message + "\n";
    out += "published " + std::to_string(r.published.size()) + " version(s)";
    out += r.published.empty() ? "\n" : ":\n";
    for (auto const& id : r.published)
        out += "  " + id + "\n";
    if (!r.held.empty()) {
        out += "held " + std::to_string(r.held.size()) + " version(s):\n";
        for (auto const& h : r.held)
            out += "  " + h.id + ": " + sync::kind_of(h.why.code) + ": " + h.why.message + "\n";
    }
    if (!r.published_with_problems.empty()) {
        out += "published with problems (" + std::to_string(r.published_with_problems.size()) + "):\n";
        for (auto const& h : r.published_with_problems)
            out += "  " + h.id + ": " + sync::kind_of(h.why.code) + ": " + h.why.message + "\n";
    }
    if (!r.unverified.empty()) {
        out += "published earlier, not accepted by the signature policy now (" + std::to_string(r.unverified.size()) +
               "):\n";
        for (auto const& h : r.unverified)
            out += "  " + h.id + ": " + sync::kind_of(h.why.code) + ": " + h.why.message + "\n";
    }
    if (!r.violations.empty()) {
        out += "violations (" + std::to_string(r.violations.size()) + "):\n";
        for (auto const& v : r.violations)
            out += "  " + sync::kind_of(v.code) + ": " + v.message + "\n";
    }
    for (auto const& change : r.refs_updated)
        out += "ref " + change.name + " -> " + change.to + (change.from ? " (was " + *change.from + ")" : " (new)") + "\n";
    for (auto const& f : r.followed)
        out += "followed " + f + "\n";
    for (auto const& [id, signer] : r.signers)
        out += "signed " + id + " by " + signer.principals + " (" + signer.fingerprint + ")\n";
    for (auto const& w : r.warnings)
        out += "warning: " + w + "\n";
    out += "copied " + std::to_string(r.files_copied) + " file(s), " + human_bytes(r.bytes_copied) + " in " +
           seconds(r.elapsed);
    if (r.versions_in_mirror)
        out += "; the mirror holds " + std::to_string(*r.versions_in_mirror) + " version(s)";
    out += "\n";
    return terminal_safe(out, true); // ref names and paths come from the origin
}

std::uint64_t peak_rss_bytes(int who) {
    struct rusage usage{};
    if (::getrusage(who, &usage) != 0)
        return 0;
    return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024; // Linux counts KiB
}

std::string sync_json(sync::sync_report const& r, std::string const& origin, std::string const& mirror) {
    json::array held;
    for (auto const& h : r.held) {
        auto e = error_json(h.why);
        e["version"] = h.id;
        held.push_back(std::move(e));
    }
    json::array with_problems;
    for (auto const& h : r.published_with_problems) {
        auto e = error_json(h.why);
        e["version"] = h.id;
        with_problems.push_back(std::move(e));
    }
    json::array unverified;
    for (auto const& h : r.unverified) {
        auto e = error_json(h.why);
        e["version"] = h.id;
        unverified.push_back(std::move(e));
    }
    json::array refs;
    for (auto const& change : r.refs_updated) {
        json::object ref{{"name", change.name}, {"to", change.to}};
        ref["from"] = change.from ? json::value(*change.from) : json::value(nullptr);
        refs.push_back(std::move(ref));
    }
    json::array drift;
    for (auto const& state : r.refs) {
        json::object ref{{"name", state.name},
                         {"origin", state.origin_target},
                         {"in_sync", state.in_sync()},
                         {"versions_behind", state.versions_behind}};
        ref["mirror"] = state.mirror_target ? json::value(*state.mirror_target) : json::value(nullptr);
        drift.push_back(std::move(ref));
    }
    json::object out{
        {"command", "sync"},
        {"origin", origin},
        {"mirror", mirror},
        {"exit_code", r.exit_code()},
        {"published", strings_json(r.published)},
        {"held", std::move(held)},
        {"published_with_problems", std::move(with_problems)},
        {"unverified", std::move(unverified)},
        {"violations", errors_json(r.violations)},
        {"refs_updated", std::move(refs)},
        {"refs", std::move(drift)},
        {"followed", strings_json(r.followed)},
        {"warnings", strings_json(r.warnings)},
        {"files_copied", r.files_copied},
        {"bytes_copied", r.bytes_copied},
        {"pending_files", r.pending_files},
        {"pending_bytes", r.pending_bytes},
        {"elapsed_seconds", static_cast<double>(r.elapsed.count()) / 1000.0},
        {"peak_rss_bytes", peak_rss_bytes()},
        {"catalog_readers_peak_rss_bytes", peak_rss_bytes(RUSAGE_CHILDREN)},
    };
    out["fatal"] = r.fatal ? json::value(error_json(*r.fatal)) : json::value(nullptr);
    out["versions_in_mirror"] = r.versions_in_mirror ? json::value(*r.versions_in_mirror) : json::value(nullptr);
    json::object signers;
    for (auto const& [id, signer] : r.signers)
        signers[id] = json::object{{"principals", signer.principals},
                                   {"fingerprint", signer.fingerprint},
                                   {"key_type", signer.key_type}};
    out["signers"] = std::move(signers);
    out["announced_keys"] = json::object{{"announced_not_trusted", strings_json(r.announced_keys.announced_not_trusted)},
                                         {"trusted_not_announced", strings_json(r.announced_keys.trusted_not_announced)},
                                         {"unreadable", strings_json(r.announced_keys.unreadable)}};
    return json::serialize(out) + "\n";
}

/// What a version's catalog holds, under its line in the audit summary.
static std::string catalog_lines(sync::catalog_summary const& c) {
    auto listed = [](std::vector<std::string> const& names) {
        std::string out;
        for (auto const& name : names)
            out += (out.empty() ? "" : ", ") + name;
        return out;
    };
    std::string out = "    catalog: DuckLake " + c.format + ", snapshot " + std::to_string(c.snapshot) + ", " +
                      std::to_string(c.tables) + " table(s), " + std::to_string(c.data_files) + " data file(s), " +
                      std::to_string(c.delete_files) + " delete file(s), " + human_bytes(c.bytes) + "\n";
    if (!c.renamed_column_tables.empty())
        out += "    renamed columns: " + listed(c.renamed_column_tables) + "\n";
    if (!c.tables_with_deletes.empty())
        out += "    delete files: " + listed(c.tables_with_deletes) + "\n";
    if (!c.views.empty())
        out += "    views: " + listed(c.views) + "\n";
    if (!c.other_formats_checked.empty())
        out += "    also checked: " + listed(c.other_formats_checked) + "\n";
    return out;
}

std::string shown_location(std::string const& location) {
    auto start = location.find("://");
    if (start == std::string::npos)
        return location;
    start += 3;
    auto end = location.find_first_of("/?#", start);
    auto at = location.rfind('@', end == std::string::npos ? std::string::npos : end - 1);
    if (at == std::string::npos || at < start)
        return location;
    return location.substr(0, start) + "***" + location.substr(at);
}

static std::string_view policy_name(verify::signature_policy policy) {
    switch (policy) {
    case verify::signature_policy::required: return "required";
    case verify::signature_policy::if_present: return "if-present";
    case verify::signature_policy::off: return "off";
    }
    return "off";
}

/// A digest whole, or its first 12 hex digits and "…" as problem messages show them.
static std::string digest_text(verify::sha256_digest const& digest, bool full) {
    auto hex = verify::to_hex(digest);
    return full ? hex : hex.substr(0, 12) + "…";
}

static std::string policy_line(audit_setup const& s) {
    std::string out = "policy: signatures " + std::string(policy_name(s.policy)) + ", namespace " + s.ns;
    if (!s.allowed_signers)
        return out + ", no allowed_signers\n";
    out += ", allowed_signers " + *s.allowed_signers;
    if (s.allowed_signers_sha256)
        out += " (sha256 " + digest_text(*s.allowed_signers_sha256, s.full_digests) + ")";
    return out + "\n";
}

/// One manifest entry of the summary (with --full-digests).
static std::string file_line(sync::audited_file const& f, std::string const& indent) {
    std::string out = indent + f.path + ": ";
    if (!f.ok)
        out += "FAILED, ";
    out += f.bytes ? std::to_string(*f.bytes) + " bytes" : std::string("size unknown");
    out += f.sha256 ? ", sha256 " + verify::to_hex(*f.sha256) : std::string(", not hashed");
    return out + " (" + std::string(sync::voucher_name(f.vouched_by)) + ")\n";
}

std::string manifest_entry_line(sync::audited_file const& f) {
    return terminal_safe(file_line(f, "    "), true); // paths come from the repository
}

/// "partial: follows refs/heads/main, depth 3, since 2026-12-05T10:00:00Z; 1 parent(s) below the window…"
std::string partial_line(sync::partial_record const& p, std::size_t parents_not_held) {
    std::string line = "partial: " + sync::describe_partial(p) + ", since " + utc_text(p.since);
    if (parents_not_held)
        line += "; " + std::to_string(parents_not_held) + " parent(s) below the window, not held (expected)";
    return line + "\n";
}

bool write_audit_summary(sync::audit_report const& r, audit_setup const& setup, manifest_spill const* spill,
                         text_out const& write, std::string& problem) {
    // Ref names and paths come from the repository: everything shown is terminal_safe.
    auto out = [&](std::string const& text) { write(terminal_safe(text, true)); };
    out("verify " + shown_location(setup.repository) + "\n");
    if (setup.attestation_summary)
        out(*setup.attestation_summary);
    out(policy_line(setup));
    if (r.fatal)
        out("stopped: " + r.fatal->message + "\n");
    if (r.partial)
        out(partial_line(*r.partial, r.parents_not_held.size()));
    if (r.head)
        out("HEAD -> " + *r.head + "\n");
    for (auto const& [name, id] : r.refs)
        out("ref " + name + " -> " + id + "\n");
    if (setup.full_digests)
        for (auto const& f : r.files)
            out(file_line(f, ""));
    std::size_t failing = 0;
    for (auto const& v : r.versions) {
        std::string state = v.problems.empty() ? "ok" : "FAILED";
        if (!v.problems.empty())
            ++failing;
        std::string flags = v.withdrawn ? ", withdrawn" : v.expired ? ", expired" : "";
        std::string signature = v.signer ? "signed by " + v.signer->principals + " (" + v.signer->fingerprint + ")"
                                         : "signature " + v.signature;
        std::string lines = "  " + v.id + (v.seq ? " (seq " + std::to_string(*v.seq) + ")" : "") + ": " + state +
                            flags + ", " + signature + ", " + std::to_string(v.tables) + " table(s), " +
                            std::to_string(v.data_files) + " data file(s), " + human_bytes(v.data_bytes) +
                            (v.data_files_proven
                                 ? ", " + std::to_string(v.data_files_proven) + " proven by the ledger"
                                 : "") +
                            "\n";
        if (v.catalog)
            lines += catalog_lines(*v.catalog);
        for (auto const& p : v.problems)
            lines += "    " + sync::kind_of(p.code) + ": " + p.message + "\n";
        if (setup.full_digests)
            for (auto const& f : v.files)
                lines += file_line(f, "    ");
        out(lines);
        // The data files' lines, when spilled, follow the version's own (they were made safe then).
        if (setup.full_digests && spill && !spill->copy(v.id, write, problem))
            return false;
    }
    std::string tail;
    for (auto const& p : r.problems)
        tail += "problem: " + sync::kind_of(p.code) + ": " + p.message + "\n";
    if (!r.keys.empty() || !r.unsigned_versions.empty()) {
        tail += "trust:\n";
        for (auto const& k : r.keys)
            tail += "  " + k.fingerprint + " (" + k.principals + ") signed " + std::to_string(k.versions) +
                    " version(s), the newest " + k.newest + "\n";
        tail += "  " + std::to_string(r.unsigned_versions.size()) + " version(s) signed by no trusted key\n";
    }
    if (!r.would_lose_trust.empty()) {
        tail += "without the given key(s), " + std::to_string(r.would_lose_trust.size()) +
                " version(s) would lose their trusted signature:\n";
        for (auto const& id : r.would_lose_trust)
            tail += "  " + id + "\n";
    }
    for (auto const& w : r.warnings)
        tail += "warning: " + w + "\n";
    tail += std::to_string(r.versions.size()) + " version(s) audited, " + std::to_string(failing) + " failed, " +
            std::to_string(r.problems.size()) + " repository problem(s) in " + seconds(r.elapsed) + "\n";
    out(tail);
    return true;
}

std::string audit_summary(sync::audit_report const& r, audit_setup const& setup) {
    std::string text, unused;
    write_audit_summary(r, setup, nullptr, [&](std::string_view piece) { text += piece; }, unused);
    return text;
}

static json::value digest_json(std::optional<verify::sha256_digest> const& digest) {
    return digest ? json::value(verify::to_hex(*digest)) : json::value(nullptr);
}

static json::object manifest_entry(sync::audited_file const& f) {
    json::object entry{{"path", f.path}, {"role", sync::role_name(f.role)}};
    entry["size"] = f.bytes ? json::value(*f.bytes) : json::value(nullptr);
    entry["sha256"] = digest_json(f.sha256);
    entry["vouched_by"] = sync::voucher_name(f.vouched_by);
    entry["ok"] = f.ok;
    return entry;
}

std::string manifest_entry_json(sync::audited_file const& f) { return json::serialize(manifest_entry(f)); }

static json::array manifest_json(std::vector<sync::audited_file> const& files) {
    json::array out;
    out.reserve(files.size());
    for (auto const& f : files)
        out.push_back(manifest_entry(f));
    return out;
}

/// The digests of a version's own files, by role: null for a file absent or not hashed.
static json::object version_digests(std::vector<sync::audited_file> const& files) {
    using sync::file_role;
    json::object out;
    for (auto role : {file_role::version_json, file_role::signature, file_role::expired_json, file_role::catalog,
                      file_role::dataset_json, file_role::files_json}) {
        auto it = std::find_if(files.begin(), files.end(), [&](auto const& f) { return f.role == role; });
        out[sync::role_name(role)] = it == files.end() ? json::value(nullptr) : digest_json(it->sha256);
    }
    return out;
}

/// `serialized`, a JSON object's text, without its closing brace (or its opening one).
static std::string_view without_last(std::string const& serialized) {
    return std::string_view(serialized).substr(0, serialized.size() - 1);
}
static std::string_view without_first(std::string const& serialized) {
    return std::string_view(serialized).substr(1);
}

bool write_audit_json(sync::audit_report const& r, audit_setup const& setup, manifest_spill const* spill,
                      text_out const& write, std::string& problem) {
    // One document, written a version at a time: each version's object, then its manifest
    // (its own files from the report, its data files from the spill when it holds them).
    std::string const opening =
        json::serialize(json::object{{"command", "verify"},
                                     {"repository", shown_location(setup.repository)},
                                     {"exit_code", std::max(r.exit_code(), setup.attestation_status)}});
    write(without_last(opening));
    if (setup.attestation_json)
        write(",\"attestation\":" + *setup.attestation_json);
    write(",\"versions\":[");
    bool first = true;
    for (auto const& v : r.versions) {
        json::object item{{"id", v.id},
                          {"reached_from", strings_json(v.reached_from)},
                          {"ok", v.problems.empty()},
                          {"expired", v.expired},
                          {"withdrawn", v.withdrawn},
                          {"tables", v.tables},
                          {"data_files", v.data_files},
                          {"data_bytes", v.data_bytes},
                          {"data_files_proven", v.data_files_proven},
                          {"data_source", v.data_source},
                          {"problems", errors_json(v.problems)},
                          {"signature", v.signature}};
        item["seq"] = v.seq ? json::value(*v.seq) : json::value(nullptr);
        if (v.signer) {
            json::object signer{{"principals", v.signer->principals},
                                {"fingerprint", v.signer->fingerprint},
                                {"key_type", v.signer->key_type},
                                {"allowed_signers_line", v.signer->line}};
            signer["ca_fingerprint"] =
                v.signer->ca_fingerprint.empty() ? json::value(nullptr) : json::value(v.signer->ca_fingerprint);
            item["signer"] = std::move(signer);
        } else {
            item["signer"] = nullptr;
        }
        if (v.catalog)
            item["catalog"] = json::object{{"format", v.catalog->format},
                                           {"snapshot", v.catalog->snapshot},
                                           {"tables", v.catalog->tables},
                                           {"data_files", v.catalog->data_files},
                                           {"delete_files", v.catalog->delete_files},
                                           {"bytes", v.catalog->bytes},
                                           {"renamed_columns", strings_json(v.catalog->renamed_column_tables)},
                                           {"tables_with_deletes", strings_json(v.catalog->tables_with_deletes)},
                                           {"views", strings_json(v.catalog->views)},
                                           {"other_formats_checked", strings_json(v.catalog->other_formats_checked)}};
        else
            item["catalog"] = nullptr;
        item["sha256"] = version_digests(v.files);
        std::string const fields = json::serialize(item);
        write(first ? "" : ",");
        first = false;
        write(without_last(fields));
        std::string const own = json::serialize(manifest_json(v.files)); // "[...]"
        write(",\"files\":");
        write(std::string_view(own).substr(0, own.size() - 1));
        if (spill && spill->holds(v.id)) {
            write(v.files.empty() ? "" : ",");
            if (!spill->copy(v.id, write, problem))
                return false;
        }
        write("]}");
    }
    write("],");
    json::object out{{"problems", errors_json(r.problems)},
                     {"warnings", strings_json(r.warnings)},
                     {"elapsed_seconds", static_cast<double>(r.elapsed.count()) / 1000.0},
                     {"unsigned_versions", strings_json(r.unsigned_versions)},
                     {"would_lose_trust", strings_json(r.would_lose_trust)}};
    json::array keys;
    for (auto const& k : r.keys)
        keys.push_back(json::object{{"fingerprint", k.fingerprint},
                                    {"principals", k.principals},
                                    {"versions", k.versions},
                                    {"newest", k.newest}});
    out["keys"] = std::move(keys);
    out["fatal"] = r.fatal ? json::value(error_json(*r.fatal)) : json::value(nullptr);
    out["audited_at"] = json::object{{"utc", utc_text(r.started_at)}, {"unix_seconds", r.started_at}};
    out["tool"] = json::object{{"name", "fdl-mirror"},
                               {"version", setup.tool.version},
                               {"libssh", setup.tool.libssh},
                               {"duckdb", setup.tool.duckdb},
                               {"openssl", setup.tool.openssl}};
    json::object policy{{"signatures", policy_name(setup.policy)}, {"namespace", setup.ns}};
    if (setup.allowed_signers)
        policy["allowed_signers"] =
            json::object{{"path", *setup.allowed_signers}, {"sha256", digest_json(setup.allowed_signers_sha256)}};
    else
        policy["allowed_signers"] = nullptr;
    out["policy"] = std::move(policy);
    out["head"] = r.head ? json::value(*r.head) : json::value(nullptr);
    json::object refs;
    for (auto const& [name, id] : r.refs)
        refs[name] = id;
    out["refs"] = std::move(refs);
    out["files"] = manifest_json(r.files);
    out["peak_rss_bytes"] = peak_rss_bytes();
    out["catalog_readers_peak_rss_bytes"] = peak_rss_bytes(RUSAGE_CHILDREN);
    // Newer fields after the earlier ones: readers that take fields by position keep working.
    if (r.partial) {
        auto partial = json::parse(sync::render_partial(*r.partial)).as_object();
        partial["parents_not_held"] = json::array(r.parents_not_held.begin(), r.parents_not_held.end());
        out["partial"] = std::move(partial);
    } else {
        out["partial"] = nullptr;
    }
    std::string const rest = json::serialize(out);
    write(without_first(rest));
    write("\n");
    return true;
}

std::string audit_json(sync::audit_report const& r, audit_setup const& setup) {
    std::string text, unused;
    write_audit_json(r, setup, nullptr, [&](std::string_view piece) { text += piece; }, unused);
    return text;
}

} // namespace mirror::daemon
