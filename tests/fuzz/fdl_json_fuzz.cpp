// libFuzzer target: the FDL JSON records an origin serves (fdl.json, version.json,
// refs.json, files.json, expired.json, dataset.json). Every input goes to every parser, so
// a seed of one kind also explores the others. Besides the sanitizers, it checks what the
// parsers promise: a refusal is an fdl_errc naming the file; what is accepted passes the
// path and id rules again; refs.json and version.json read back what they describe.

#include "core/fdl/errors.hpp"
#include "core/fdl/files_index.hpp"
#include "core/fdl/ids.hpp"
#include "core/fdl/paths.hpp"
#include "core/fdl/refs.hpp"
#include "core/fdl/repo_settings.hpp"
#include "core/fdl/small_files.hpp"
#include "core/fdl/version_record.hpp"
#include "tests/fuzz/support/check.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <set>

using namespace mirror;
using namespace mirror::fdl;
using mirror::fuzz::check;

namespace {

constexpr std::string_view record_file = "versions/x/version.json";
constexpr std::string_view index_file = "versions/x/files.json";

/// A refusal must be classified as an FDL error and name its file first.
template <class T>
void check_refusal(result<T> const& parsed, std::string_view file) {
    if (parsed)
        return;
    check(parsed.error().code.category() == fdl_category(), "a refusal that is not an fdl_errc");
    check(parsed.error().message.starts_with(file), "a refusal that does not name its file first",
          parsed.error().message);
}

void check_pinned_path(std::string const& path) {
    check(!relative_path_problem(path), "an accepted pinned path fails relative_path_problem", path);
    check(path != "version.json" && path != "version.json.sig", "version.json pins itself", path);
}

/// version.json as the parser reads it, from the parsed record: what a writer with the
/// same record would write (unknown fields aside).
std::string render(version_record const& r) {
    boost::json::object o;
    o["fdl"] = "0.1";
    o["id"] = r.id;
    if (r.seq)
        o["seq"] = *r.seq;
    boost::json::array parents;
    for (auto const& p : r.parents)
        parents.emplace_back(p);
    o["parents"] = std::move(parents);
    if (r.created_at)
        o["created_at"] = *r.created_at;
    for (auto [key, pinned] : {std::pair{"catalog", &r.catalog}, std::pair{"dataset", &r.dataset},
                               std::pair{"files", &r.files}})
        if (*pinned)
            o[key] = {{"path", (*pinned)->path}, {"bytes", (*pinned)->bytes}, {"sha256", verify::to_hex((*pinned)->sha256)}};
    if (r.ducklake) {
        boost::json::array snapshots;
        for (auto s : r.ducklake->snapshots)
            snapshots.emplace_back(s);
        o["ducklake"] = {{"format", r.ducklake->format}, {"snapshot_id", r.ducklake->snapshot_id},
                         {"snapshots", std::move(snapshots)}};
    }
    return boost::json::serialize(o);
}

bool same_pinned(std::optional<pinned_file> const& a, std::optional<pinned_file> const& b) {
    if (!a || !b)
        return !a && !b;
    return a->path == b->path && a->bytes == b->bytes && a->sha256 == b->sha256;
}

bool same_record(version_record const& a, version_record const& b) {
    bool ducklake = (!a.ducklake && !b.ducklake) ||
                    (a.ducklake && b.ducklake && a.ducklake->format == b.ducklake->format &&
                     a.ducklake->snapshot_id == b.ducklake->snapshot_id &&
                     a.ducklake->snapshots == b.ducklake->snapshots);
    return a.id == b.id && a.seq == b.seq && a.parents == b.parents && a.created_at == b.created_at &&
           same_pinned(a.catalog, b.catalog) && same_pinned(a.dataset, b.dataset) && same_pinned(a.files, b.files) &&
           ducklake;
}

void check_record(std::string_view text) {
    auto record = parse_version_record(text, record_file);
    check_refusal(record, record_file);
    if (!record)
        return;
    check(is_version_id(record->id), "an accepted record id is not a version id", record->id);
    for (auto const& parent : record->parents) {
        check(is_version_id(parent), "an accepted parent is not a version id", parent);
        check(parent != record->id, "a record accepted as its own parent", parent);
    }
    for (auto const* pinned : {&record->catalog, &record->dataset, &record->files})
        if (*pinned)
            check_pinned_path((*pinned)->path);
    check(check_record_folder(*record, record->id, record_file).has_value(), "a record does not match its own id");
    auto again = parse_version_record(render(*record), record_file);
    check(again.has_value(), "a rendered record is refused", render(*record));
    check(same_record(*record, *again), "a rendered record reads back different", render(*record));
}

void check_settings(std::string_view text) {
    auto settings = parse_repo_settings(text);
    check_refusal(settings, "fdl.json");
    if (!settings)
        return;
    check(major_version_of(settings->fdl) == known_major_version, "an accepted fdl.json of another major version");
    check(!data_dir_problem(settings->data_dir), "an accepted data_dir fails data_dir_problem", settings->data_dir);
    check(!settings->id || !settings->id->empty(), "an accepted empty id");
    for (auto const& format : settings->catalog_formats)
        check(!relative_path_problem(format.ducklake) && format.ducklake.find('/') == std::string::npos,
              "an accepted catalog format is not one safe file name", format.ducklake);
}

void check_refs(std::string_view text) {
    auto refs = parse_refs_json(text);
    check_refusal(refs, "refs.json");
    if (!refs)
        return;
    for (auto const& [name, id] : refs->refs) {
        check(!ref_name_problem(name), "an accepted ref name fails ref_name_problem", name);
        check(is_version_id(id), "an accepted ref value is not a version id", id);
    }
    if (refs->head)
        check(parse_head(*refs->head).has_value(), "an accepted HEAD does not parse alone", *refs->head);
    // What render_refs_json writes, parse_refs_json reads back unchanged.
    std::string rendered = render_refs_json(*refs);
    auto again = parse_refs_json(rendered);
    check(again.has_value(), "rendered refs.json is refused", rendered);
    check(again->head == refs->head && again->refs == refs->refs, "rendered refs.json reads back different", rendered);
}

void check_index(std::string_view text) {
    auto index = parse_files_index(text, index_file);
    check_refusal(index, index_file);
    if (!index)
        return;
    std::set<std::string> listed;
    for (auto const& table : index->tables)
        for (auto const& f : table.files) {
            check(!relative_path_problem(f.path), "an accepted data file path fails relative_path_problem", f.path);
            listed.insert(f.path);
            if (f.deletes) {
                check(!relative_path_problem(f.deletes->path), "an accepted delete file path fails", f.deletes->path);
                listed.insert(f.deletes->path);
            }
        }
    auto needed = needed_files(*index, index_file);
    check_refusal(needed, index_file);
    if (!needed)
        return;
    std::set<std::string> once;
    for (auto const& f : *needed) {
        check(once.insert(f.path).second, "needed_files names a file twice", f.path);
        check(listed.count(f.path) == 1, "needed_files names a file the index does not", f.path);
    }
    check(once.size() == listed.size(), "needed_files misses a file the index names");
}

void check_small_files(std::string_view text) {
    auto dataset = parse_dataset(text, "versions/x/dataset.json");
    check_refusal(dataset, "versions/x/dataset.json");
    auto expired = parse_expiry(text, "versions/x/expired.json");
    check_refusal(expired, "versions/x/expired.json");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(unsigned char const* data, std::size_t size) {
    auto text = mirror::fuzz::as_text(data, size);
    check_settings(text);
    check_record(text);
    check_refs(text);
    check_index(text);
    check_small_files(text);
    return 0;
}
