#include "core/catalog/compare.hpp"

#include "core/catalog/errors.hpp"
#include "core/io/text.hpp"

#include <map>
#include <set>

namespace mirror::catalog {

namespace {

/// Collects disagreements up to a limit, then counts the rest.
class findings {
public:
    findings(catalog_errc code, std::string prefix, std::size_t limit)
        : code_(code), prefix_(std::move(prefix)), limit_(limit) {}
    void add(std::string const& what) {
        if (out_.size() < limit_)
            out_.push_back(make_error(code_, prefix_ + what));
        else
            ++more_;
    }
    std::vector<error> take() {
        if (more_ > 0)
            out_.push_back(make_error(code_, prefix_ + "and " + std::to_string(more_) + " more differences"));
        return std::move(out_);
    }

private:
    catalog_errc code_;
    std::string prefix_;
    std::size_t limit_;
    std::size_t more_ = 0;
    std::vector<error> out_;
};

std::string quoted(std::string const& s) { return "'" + s + "'"; }

void compare_file(findings& found, std::string const& table, catalog_data_file const& want,
                  fdl::data_file_entry const& have) {
    std::string where = table + " " + quoted(want.path) + ": ";
    auto differs = [&](char const* field, auto catalog_value, auto index_value) {
        found.add(where + field + " is " + std::to_string(index_value) + " in files.json, " +
                  std::to_string(catalog_value) + " in the catalog");
    };
    if (have.rows != want.rows)
        differs("rows", want.rows, have.rows);
    if (have.bytes != want.bytes)
        differs("bytes", want.bytes, have.bytes);
    if (have.footer_bytes != want.footer_bytes) {
        if (!want.footer_bytes)
            found.add(where + "files.json gives footer_bytes, the catalog records none");
        else if (!have.footer_bytes)
            found.add(where + "footer_bytes is missing from files.json (" + std::to_string(*want.footer_bytes) +
                      " in the catalog)");
        else
            differs("footer_bytes", *want.footer_bytes, *have.footer_bytes);
    }
    if (!want.deletes && have.deletes)
        found.add(where + "files.json gives deletes " + quoted(have.deletes->path) + ", the catalog none");
    else if (want.deletes && !have.deletes)
        found.add(where + "files.json lacks its delete file " + quoted(want.deletes->path));
    else if (want.deletes && have.deletes) {
        if (have.deletes->path != want.deletes->path)
            found.add(where + "its delete file is " + quoted(have.deletes->path) + " in files.json, " +
                      quoted(want.deletes->path) + " in the catalog");
        else if (have.deletes->rows != want.deletes->rows)
            differs("deletes.rows", want.deletes->rows, have.deletes->rows);
        else if (have.deletes->bytes != want.deletes->bytes)
            differs("deletes.bytes", want.deletes->bytes, have.deletes->bytes);
    }
}

void compare_table(findings& found, catalog_table const& want, fdl::table_entry const& have) {
    if (have.renamed_columns != want.renamed_columns)
        found.add(want.name + ": renamed_columns is " + (have.renamed_columns ? "true" : "false") +
                  " in files.json, " + (want.renamed_columns ? "true" : "false") + " in the catalog");
    std::size_t common = std::min(want.files.size(), have.files.size());
    for (std::size_t i = 0; i < common; ++i) {
        if (have.files[i].path != want.files[i].path) {
            found.add(want.name + ": file " + std::to_string(i + 1) + " is " + quoted(have.files[i].path) +
                      " in files.json, " + quoted(want.files[i].path) + " in the catalog");
            return; // the rest of the table is out of step; one finding says it
        }
        compare_file(found, want.name, want.files[i], have.files[i]);
    }
    if (want.files.size() != have.files.size())
        found.add(want.name + ": " + std::to_string(have.files.size()) + " files in files.json, " +
                  std::to_string(want.files.size()) + " in the catalog");
}

} // namespace

std::vector<error> check_against_record(catalog_contents const& catalog, fdl::ducklake_block const& block,
                                        std::string const& name) {
    std::vector<error> out;
    if (catalog.last_snapshot != block.snapshot_id)
        out.push_back(make_error(catalog_errc::snapshot_mismatch,
                                 name + ": the catalog's last snapshot is " + std::to_string(catalog.last_snapshot) +
                                     ", version.json says ducklake.snapshot_id " + std::to_string(block.snapshot_id)));
    if (catalog.format != block.format)
        out.push_back(make_error(catalog_errc::format_mismatch, name + ": the catalog is in DuckLake format " +
                                                                    catalog.format + ", version.json says " +
                                                                    std::string(io::utf8_prefix(block.format, 40))));
    return out;
}

std::vector<error> compare_with_index(catalog_contents const& catalog, fdl::files_index const& index,
                                      std::string const& index_name, std::size_t limit) {
    findings found(catalog_errc::index_disagrees, index_name + " disagrees with the catalog (the catalog wins): ",
                   limit);
    std::map<std::string_view, fdl::table_entry const*> listed;
    for (auto const& t : index.tables)
        listed.emplace(t.name, &t);
    for (auto const& want : catalog.tables) {
        auto have = listed.find(want.name);
        if (have == listed.end()) {
            found.add("table " + want.name + " is missing");
            continue;
        }
        compare_table(found, want, *have->second);
        listed.erase(have);
    }
    for (auto const& [name, table] : listed)
        found.add("table " + std::string(name) + " is not in the catalog at snapshot " +
                  std::to_string(catalog.last_snapshot));
    return found.take();
}

std::vector<error> compare_catalogs(catalog_contents const& catalog, catalog_contents const& other,
                                    std::string const& declared_format, std::string const& other_name,
                                    std::size_t limit) {
    std::vector<error> out;
    if (other.format != declared_format)
        out.push_back(make_error(catalog_errc::format_mismatch, other_name + ": its name says format " +
                                                                    declared_format + ", it holds format " +
                                                                    std::string(io::utf8_prefix(other.format, 40))));
    // The files live at each one's last snapshot, with their sizes.
    auto live = [](catalog_contents const& c) {
        std::map<std::string, std::uint64_t> files;
        for (auto const& t : c.tables)
            for (auto const& f : t.files) {
                files.emplace(f.path, f.bytes);
                if (f.deletes)
                    files.emplace(f.deletes->path, f.deletes->bytes);
            }
        return files;
    };
    auto want = live(catalog), have = live(other);
    findings found(catalog_errc::catalogs_disagree, other_name + " differs from the version's catalog: ", limit);
    for (auto const& [path, bytes] : want) {
        auto it = have.find(path);
        if (it == have.end())
            found.add(quoted(path) + " is missing");
        else if (it->second != bytes)
            found.add(quoted(path) + " has " + std::to_string(it->second) + " bytes, not " + std::to_string(bytes));
    }
    for (auto const& [path, bytes] : have)
        if (!want.contains(path))
            found.add(quoted(path) + " is not in the version's catalog");
    for (auto& e : found.take())
        out.push_back(std::move(e));
    for (auto const& e : other.problems)
        out.push_back(e);
    return out;
}

} // namespace mirror::catalog
