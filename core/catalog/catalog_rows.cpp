#include "core/catalog/catalog_rows.hpp"

#include "core/catalog/catalog_objects.hpp"
#include "core/io/text.hpp"

#include <algorithm>
#include <charconv>
#include <functional>

namespace mirror::catalog {

namespace {

/// One table read whole, and the typed values of the row in hand. A value that is not of
/// its column's kind is a problem of the catalog, and its row is left out.
class table_reader {
public:
    table_reader(std::string const& catalog, std::string table, std::vector<error>& problems)
        : catalog_(catalog), table_(std::move(table)), problems_(problems) {}

    /// Reads `columns` of every row, then calls `each` per row; `each` reads through the accessors.
    result<void> read(duckdb_session& db, std::vector<char const*> const& columns, std::size_t max_rows,
                      std::function<void()> const& each) {
        std::string sql = "SELECT ";
        for (std::size_t i = 0; i < columns.size(); ++i)
            sql += std::string(i == 0 ? "" : ", ") + "\"" + columns[i] + "\"";
        sql += " FROM " + qualified_table(db, table_);
        bool columns_differ = false;
        auto read = db.query_each(sql, max_rows, [&](table& batch) -> result<void> {
            // Columns are known by their place in the select: DuckDB binds a name in any
            // case and names the result's column as the catalog stores it.
            if (batch.columns.size() != columns.size()) {
                columns_differ = true;
                return make_error(catalog_errc::query_failed, catalog_ + ": not a DuckLake catalog (" + table_ +
                                                                  ": another number of columns than selected)");
            }
            rows_.columns.assign(columns.begin(), columns.end());
            rows_.rows = std::move(batch.rows);
            batch.rows.clear();
            for (row_ = 0; row_ < rows_.rows.size(); ++row_) {
                valid_ = true;
                each();
            }
            return {};
        });
        if (!read) {
            if (read.error().code != catalog_errc::query_failed)
                return read.error();
            if (columns_differ)
                return read.error();
            return make_error(catalog_errc::query_failed,
                              catalog_ + ": not a DuckLake catalog (" + table_ + ": " + read.error().message + ")");
        }
        return {};
    }

    bool row_valid() const { return valid_; }

    /// Each column is taken at most once per row: its text is moved out.
    std::optional<std::string> text(char const* column) { return std::move(cell(column)); }

    std::optional<std::int64_t> integer(char const* column) {
        auto const& value = cell(column);
        if (!value)
            return std::nullopt;
        std::int64_t out = 0;
        auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), out);
        if (ec != std::errc() || end != value->data() + value->size())
            invalid(column, *value, "an integer");
        return out;
    }

    std::optional<bool> boolean(char const* column) {
        auto const& value = cell(column);
        if (!value)
            return std::nullopt;
        if (*value != "true" && *value != "false")
            invalid(column, *value, "true or false");
        return *value == "true";
    }

    lifetime life() { return {integer("begin_snapshot"), integer("end_snapshot")}; }

private:
    std::optional<std::string>& cell(char const* column) { return rows_.rows[row_][rows_.column(column)]; }

    void invalid(char const* column, std::string const& value, char const* kind) {
        if (valid_)
            problems_.push_back(make_error(catalog_errc::bad_catalog, catalog_ + ": " + table_ + "." + column + " '" +
                                                                          std::string(io::utf8_prefix(value, 40)) +
                                                                          "' is not " + kind));
        valid_ = false;
    }

    std::string const& catalog_;
    std::string table_;
    std::vector<error>& problems_;
    table rows_;
    std::size_t row_ = 0;
    bool valid_ = true;
};

} // namespace

namespace {

/// Which rows of data and delete files a read keeps: those visible at a snapshot it needs
/// (the last one, and those asked for), and those the reader must report (a snapshot that
/// is missing or negative). Adds up what the kept ones will take as contents, at least.
class files_kept {
public:
    files_kept(std::vector<std::optional<std::string>> const& snapshot_ids, read_options const& options)
        : wanted_(options.snapshots), max_memory_(options.max_memory) {
        std::optional<std::uint64_t> last;
        for (auto const& text : snapshot_ids) {
            std::uint64_t id = 0;
            if (!text)
                continue;
            auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), id);
            if (ec == std::errc() && end == text->data() + text->size())
                last = std::max(last.value_or(0), id);
        }
        if (last)
            wanted_.push_back(*last);
    }

    bool wanted(file_row const& row) {
        auto const& life = row.life;
        bool odd = !life.begin || *life.begin < 0 || (life.end && *life.end < 0);
        bool visible = std::any_of(wanted_.begin(), wanted_.end(), [&](auto at) { return life.visible_at(at); });
        if (!odd && !visible)
            return false;
        ++count_;
        // A data file is an entry of its table's list and of `needed`; a delete file, of `needed`.
        bytes_ += sizeof(fdl::needed_data_file) + (row.is_delete ? 0 : sizeof(catalog_data_file));
        return !over_memory(); // past it the read fails: the rest are counted, not kept

    }
    bool over_memory() const { return max_memory_ != 0 && bytes_ > max_memory_; }
    std::uint64_t count() const { return count_; }

private:
    std::vector<std::uint64_t> wanted_;
    std::uint64_t max_memory_;
    std::uint64_t count_ = 0;
    std::uint64_t bytes_ = 0;
};

} // namespace

namespace {

/// One read of a catalog's rows, a step per group of metadata tables, each failing with
/// the table's error.
class rows_read {
public:
    rows_read(duckdb_session& db, std::string const& name, read_options const& options)
        : db_(db), name_(name), options_(options) {}

    result<catalog_rows> run() {
        for (auto step : {&rows_read::settings_and_snapshots, &rows_read::schemas_and_tables, &rows_read::files,
                          &rows_read::columns_and_views})
            if (auto ok = (this->*step)(); !ok)
                return ok.error();
        return std::move(out_);
    }

private:
    table_reader reader(char const* table) { return table_reader(name_, table, out_.problems); }

    result<void> settings_and_snapshots() {
        auto metadata = reader("ducklake_metadata");
        auto read = metadata.read(db_, {"key", "value", "scope"}, options_.max_files, [&] {
            out_.settings.push_back({metadata.text("key"), metadata.text("value"), !metadata.text("scope")});
        });
        if (!read)
            return read;
        auto snapshots = reader("ducklake_snapshot");
        return snapshots.read(db_, {"snapshot_id"}, options_.max_files,
                              [&] { out_.snapshot_ids.push_back(snapshots.text("snapshot_id")); });
    }

    result<void> schemas_and_tables() {
        auto schemas = reader("ducklake_schema");
        auto read = schemas.read(
            db_, {"schema_id", "begin_snapshot", "end_snapshot", "schema_name", "path", "path_is_relative"},
            options_.max_files, [&] {
                schema_row row{schemas.integer("schema_id"), schemas.life(), schemas.text("schema_name"),
                               {schemas.text("path"), schemas.boolean("path_is_relative")}};
                if (schemas.row_valid())
                    out_.schemas.push_back(std::move(row));
            });
        if (!read)
            return read;
        auto tables = reader("ducklake_table");
        return tables.read(
            db_, {"table_id", "begin_snapshot", "end_snapshot", "schema_id", "table_name", "path", "path_is_relative"},
            options_.max_files, [&] {
                table_row row{tables.integer("table_id"), tables.integer("schema_id"), tables.life(),
                              tables.text("table_name"), {tables.text("path"), tables.boolean("path_is_relative")}};
                if (tables.row_valid())
                    out_.tables.push_back(std::move(row));
            });
    }

    /// A row of ducklake_data_file (`is_delete` false) or ducklake_delete_file: the same
    /// columns, but for the ids and the names of the count and the format.
    static file_row file_row_of(table_reader& t, bool is_delete) {
        auto id = t.integer(is_delete ? "delete_file_id" : "data_file_id");
        return file_row{is_delete,
                        id,
                        is_delete ? t.integer("data_file_id") : id,
                        t.integer("table_id"),
                        t.life(),
                        t.text("path"),
                        t.boolean("path_is_relative"),
                        t.text(is_delete ? "delete_count" : "record_count"),
                        t.text("file_size_bytes"),
                        t.text("footer_size"),
                        t.text(is_delete ? "format" : "file_format"),
                        !t.text("encryption_key").value_or("").empty()};
    }

    /// The data and delete files a read needs (files_kept), and no more than it may hold.
    result<void> files() {
        files_kept kept(out_.snapshot_ids, options_);
        for (bool is_delete : {false, true}) {
            auto t = reader(is_delete ? "ducklake_delete_file" : "ducklake_data_file");
            std::vector<char const*> columns{"begin_snapshot", "end_snapshot", "path", "path_is_relative",
                                             "file_size_bytes", "footer_size", "encryption_key", "table_id"};
            if (is_delete)
                columns.insert(columns.end(), {"delete_file_id", "data_file_id", "delete_count", "format"});
            else
                columns.insert(columns.end(), {"data_file_id", "record_count", "file_format"});
            auto read = t.read(db_, columns, options_.max_files, [&] {
                auto row = file_row_of(t, is_delete);
                if (t.row_valid() && kept.wanted(row))
                    out_.files.push_back(std::move(row));
            });
            if (!read)
                return read;
        }
        if (kept.over_memory())
            return make_error(catalog_errc::over_memory_limit,
                              name_ + ": its " + std::to_string(kept.count()) + " live data and delete files would " +
                                  "take more than the " + std::to_string(options_.max_memory >> 20) +
                                  " MiB of memory this mirror allows one version's catalog (memory_limit)");
        return {};
    }

    result<void> columns_and_views() {
        auto columns = reader("ducklake_column");
        auto read = columns.read(db_, {"table_id", "column_id", "column_name"}, options_.max_files, [&] {
            column_row row{columns.integer("table_id"), columns.integer("column_id"), columns.text("column_name")};
            if (columns.row_valid())
                out_.columns.push_back(std::move(row));
        });
        if (!read)
            return read;
        auto views = reader("ducklake_view");
        return views.read(db_, {"schema_id", "begin_snapshot", "end_snapshot", "view_name", "dialect", "sql"},
                          options_.max_files, [&] {
                              view_row row{views.integer("schema_id"), views.life(), views.text("view_name"),
                                           views.text("dialect"), views.text("sql")};
                              if (views.row_valid())
                                  out_.views.push_back(std::move(row));
                          });
    }

    duckdb_session& db_;
    std::string const& name_;
    read_options const& options_;
    catalog_rows out_;
};

} // namespace

result<catalog_rows> read_catalog_rows(duckdb_session& db, std::string const& name, read_options const& options) {
    return rows_read(db, name, options).run();
}

} // namespace mirror::catalog
