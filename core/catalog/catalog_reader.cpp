#include "core/catalog/catalog_reader.hpp"

#include "core/catalog/duckdb_session.hpp"
#include "core/catalog/queries.hpp"
#include "core/fdl/paths.hpp"

#include <charconv>
#include <map>
#include <unordered_map>

namespace mirror::catalog {

namespace {

std::optional<std::uint64_t> count_of(std::optional<std::string> const& text) {
    if (!text)
        return std::nullopt;
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
    if (ec != std::errc() || end != text->data() + text->size())
        return std::nullopt;
    return value;
}

std::string at_snapshot(std::string_view sql, std::uint64_t snapshot) {
    std::string out(sql);
    for (auto at = out.find("{SNAPSHOT}"); at != std::string::npos; at = out.find("{SNAPSHOT}"))
        out.replace(at, 10, std::to_string(snapshot));
    return out;
}

/// What a catalog may name a table it holds inlined rows in.
bool is_inlined_table_name(std::string_view name) {
    for (std::string_view prefix : {"ducklake_inlined_data_", "ducklake_inlined_delete_"}) {
        if (!name.starts_with(prefix) || name.size() == prefix.size())
            continue;
        auto rest = name.substr(prefix.size());
        return rest.find_first_not_of("0123456789_") == std::string_view::npos;
    }
    return false;
}

/// One file row of the live-files query, checked.
struct file_row {
    bool is_delete = false;
    std::string data_file_id; ///< for a delete file, the data file it applies to
    std::string table;        ///< "schema.table"
    std::uint64_t rows = 0;
    std::uint64_t bytes = 0;
    std::optional<std::uint64_t> footer_bytes;
    std::string path; ///< relative to data_dir
};

class reader {
public:
    reader(duckdb_session& db, std::string const& name, read_options const& options, catalog_contents& out)
        : db_(db), name_(name), options_(options), out_(out) {}

    result<void> read() {
        if (auto ok = read_settings(); !ok)
            return ok;
        if (auto ok = read_snapshots(); !ok)
            return ok;
        if (auto ok = read_tables(); !ok)
            return ok;
        auto live = files_at(out_.last_snapshot);
        if (!live)
            return live.error();
        attach_files(*live);
        add_needed(*live);
        for (auto snapshot : options_.snapshots) {
            if (snapshot == out_.last_snapshot)
                continue;
            if (!std::binary_search(out_.retained_snapshots.begin(), out_.retained_snapshots.end(), snapshot)) {
                problem(catalog_errc::snapshot_mismatch, "version.json lists snapshot " + std::to_string(snapshot) +
                                                             ", which the catalog does not retain");
                continue;
            }
            auto then = files_at(snapshot);
            if (!then)
                return then.error();
            add_needed(*then);
        }
        if (auto ok = read_views(); !ok)
            return ok;
        return check_inlined();
    }

private:
    void problem(catalog_errc code, std::string const& why) { out_.problems.push_back(make_error(code, name_ + ": " + why)); }
    error fail(catalog_errc code, std::string const& why) const { return make_error(code, name_ + ": " + why); }

    result<void> read_settings() {
        auto settings = db_.query(std::string(queries::metadata), 100);
        if (!settings) {
            if (settings.error().code != catalog_errc::query_failed)
                return settings.error();
            return fail(catalog_errc::query_failed, "not a DuckLake catalog (" + settings.error().message + ")");
        }
        for (auto const& row : settings->rows) {
            if (row[0] == "version" && row[1])
                out_.format = *row[1];
            else if (row[0] == "data_path" && row[1])
                out_.data_path = *row[1];
            else if (row[0] == "encrypted" && row[1] == "true")
                return fail(catalog_errc::bad_catalog, "encrypted catalogs are not read");
        }
        if (!is_known_format(out_.format))
            return fail(catalog_errc::unknown_format, "DuckLake format '" + out_.format.substr(0, 40) + "' is not known");
        return {};
    }

    result<void> read_snapshots() {
        auto snapshots = db_.query(std::string(queries::snapshots), options_.max_files);
        if (!snapshots)
            return snapshots.error();
        for (auto const& row : snapshots->rows) {
            auto id = count_of(row[0]);
            if (!id)
                return fail(catalog_errc::bad_catalog, "a snapshot id is not a non-negative integer");
            out_.retained_snapshots.push_back(*id);
        }
        if (out_.retained_snapshots.empty())
            return fail(catalog_errc::bad_catalog, "no snapshot");
        out_.last_snapshot = out_.retained_snapshots.back();
        return {};
    }

    result<void> read_tables() {
        auto tables = db_.query(at_snapshot(queries::tables, out_.last_snapshot), options_.max_files);
        if (!tables)
            return tables.error();
        auto schema = tables->column("schema_name"), table = tables->column("table_name"),
             renamed = tables->column("renamed_columns");
        for (auto const& row : tables->rows) {
            if (!row[schema] || !row[table]) {
                problem(catalog_errc::bad_catalog, "a table's schema or name is not visible at snapshot " +
                                                       std::to_string(out_.last_snapshot));
                continue;
            }
            out_.tables.push_back({*row[schema] + "." + *row[table], row[renamed] == "true", {}});
        }
        return {};
    }

    result<std::vector<file_row>> files_at(std::uint64_t snapshot) {
        auto files = db_.query(at_snapshot(queries::live_files, snapshot), options_.max_files);
        if (!files)
            return files.error();
        auto kind = files->column("kind"), data_file = files->column("data_file_id"),
             schema = files->column("schema_name"), table = files->column("table_name"),
             rows = files->column("row_count"), bytes = files->column("file_size_bytes"),
             footer = files->column("footer_size"), path = files->column("rel_path"), full = files->column("full_path");
        std::vector<file_row> out;
        for (auto const& row : files->rows) {
            auto shown = [&] { return "'" + row[full].value_or("?").substr(0, 200) + "'"; }; // for messages only
            if (!row[path]) {
                problem(catalog_errc::outside_data_dir, shown() + " lies outside data_dir");
                continue;
            }
            if (auto unsafe = fdl::relative_path_problem(*row[path])) {
                problem(catalog_errc::outside_data_dir, shown() + ": " + *unsafe);
                continue;
            }
            if (!row[schema] || !row[table]) {
                problem(catalog_errc::bad_catalog,
                        shown() + ": its table is not visible at snapshot " + std::to_string(snapshot));
                continue;
            }
            auto row_count = count_of(row[rows]);
            auto size = count_of(row[bytes]);
            if (!row_count || !size) {
                problem(catalog_errc::bad_catalog, shown() + ": row count or size is not a non-negative integer");
                continue;
            }
            file_row file{row[kind] == "delete", row[data_file].value_or(""), *row[schema] + "." + *row[table],
                          *row_count, *size, count_of(row[footer]), *row[path]};
            out.push_back(std::move(file));
        }
        return out;
    }

    /// Puts the live data files under their tables, and each delete file on its data file.
    void attach_files(std::vector<file_row> const& live) {
        std::map<std::string, std::size_t, std::less<>> table_at;
        for (std::size_t i = 0; i < out_.tables.size(); ++i)
            table_at.emplace(out_.tables[i].name, i);
        // Indexes, not pointers: the vectors grow while this fills them.
        std::unordered_map<std::string, std::pair<std::size_t, std::size_t>> data_by_id;
        for (auto const& f : live) {
            if (f.is_delete)
                continue;
            auto at = table_at.find(f.table);
            if (at == table_at.end()) {
                problem(catalog_errc::bad_catalog, "'" + f.path + "': its table " + f.table + " is not listed");
                continue;
            }
            auto& files = out_.tables[at->second].files;
            files.push_back({f.path, f.rows, f.bytes, f.footer_bytes, {}});
            data_by_id[f.data_file_id] = {at->second, files.size() - 1};
        }
        for (auto const& f : live) {
            if (!f.is_delete)
                continue;
            auto target = data_by_id.find(f.data_file_id);
            if (target == data_by_id.end()) {
                problem(catalog_errc::bad_catalog, "delete file '" + f.path + "' applies to no live data file");
                continue;
            }
            auto& data = out_.tables[target->second.first].files[target->second.second];
            if (data.deletes) {
                problem(catalog_errc::bad_catalog, "'" + data.path + "' has two live delete files");
                continue;
            }
            data.deletes = catalog_delete{f.path, f.rows, f.bytes};
        }
    }

    void add_needed(std::vector<file_row> const& files) {
        for (auto const& f : files) {
            auto [at, added] = needed_size_.emplace(f.path, f.bytes);
            if (added)
                out_.needed.push_back({f.path, f.bytes});
            else if (at->second != f.bytes)
                problem(catalog_errc::bad_catalog, "'" + f.path + "' is recorded with two sizes, " +
                                                       std::to_string(at->second) + " and " + std::to_string(f.bytes));
        }
    }

    result<void> read_views() {
        auto views = db_.query(at_snapshot(queries::views, out_.last_snapshot), options_.max_files);
        if (!views)
            return views.error();
        auto schema = views->column("schema_name"), view = views->column("view_name"),
             dialect = views->column("dialect"), sql = views->column("sql");
        for (auto const& row : views->rows)
            out_.views.push_back(
                {row[schema].value_or("?") + "." + row[view].value_or("?"), row[dialect].value_or(""), row[sql].value_or("")});
        return {};
    }

    result<void> check_inlined() {
        auto tables = db_.query(std::string(queries::inlined_tables), 100'000);
        if (!tables)
            return tables.error();
        for (auto const& row : tables->rows) {
            std::string table = row[0].value_or("");
            if (!is_inlined_table_name(table)) {
                problem(catalog_errc::bad_catalog, "unexpected catalog table '" + table.substr(0, 100) + "'");
                continue;
            }
            auto count = db_.query("SELECT count(*) FROM main.\"" + table + "\"", 1);
            if (!count)
                return count.error();
            auto rows = count->rows.empty() ? std::nullopt : count_of(count->rows[0][0]);
            if (rows && *rows > 0)
                problem(catalog_errc::inlined_rows,
                        table + " holds " + std::to_string(*rows) + " rows inside the catalog instead of in data files");
        }
        return {};
    }

    duckdb_session& db_;
    std::string const& name_;
    read_options const& options_;
    catalog_contents& out_;
    std::unordered_map<std::string, std::uint64_t> needed_size_; ///< path -> bytes, of `needed`
};

} // namespace

bool reader_available() noexcept { return true; }

struct catalog_reader::impl {
    std::filesystem::path folder;
    std::unique_ptr<duckdb_instance> db;
};

catalog_reader::catalog_reader(std::filesystem::path folder) : impl_(std::make_unique<impl>()) {
    impl_->folder = std::move(folder);
}
catalog_reader::~catalog_reader() = default;

result<catalog_contents> catalog_reader::read(std::filesystem::path const& private_copy, std::string const& name,
                                              read_options const& options) {
    session_options session;
    session.deadline = std::chrono::steady_clock::now() + options.time_limit;
    session.name = name;
    auto& db = impl_->db;
    if (db && (!db->usable() || db->memory_limit() != options.memory_limit))
        db.reset();
    if (!db) {
        auto opened = duckdb_instance::open(impl_->folder, options.memory_limit);
        if (!opened)
            return with_context(opened.error(), name);
        db = std::move(*opened);
    }
    auto read = [&]() -> result<catalog_contents> {
        auto attached = duckdb_session::attach(*db, private_copy, session);
        if (!attached)
            return attached.error();
        catalog_contents out;
        if (auto ok = reader(**attached, name, options, out).read(); !ok)
            return ok.error();
        return out;
    }; // the catalog is detached when its session ends, before the database can go
    auto out = read();
    if (!out)
        db.reset(); // whatever went wrong stays with this catalog
    return out;
}

result<catalog_contents> read_catalog(std::filesystem::path const& private_copy, std::string const& name,
                                      read_options const& options) {
    auto file = std::filesystem::absolute(private_copy);
    return catalog_reader(file.parent_path()).read(file, name, options);
}

} // namespace mirror::catalog
