#include "core/catalog/catalog_rows.hpp"

#include "core/catalog/catalog_objects.hpp"

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
                                                                          value.substr(0, 40) + "' is not " + kind));
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

result<catalog_rows> read_catalog_rows(duckdb_session& db, std::string const& name, read_options const& options) {
    std::size_t const max_rows = options.max_files;
    catalog_rows out;
    auto reader = [&](char const* table) { return table_reader(name, table, out.problems); };

    auto metadata = reader("ducklake_metadata");
    auto read = metadata.read(db, {"key", "value", "scope"}, max_rows, [&] {
        out.settings.push_back({metadata.text("key"), metadata.text("value"), !metadata.text("scope")});
    });
    if (!read)
        return read.error();

    auto snapshots = reader("ducklake_snapshot");
    read = snapshots.read(db, {"snapshot_id"}, max_rows,
                          [&] { out.snapshot_ids.push_back(snapshots.text("snapshot_id")); });
    if (!read)
        return read.error();
    files_kept kept(out.snapshot_ids, options);

    auto schemas = reader("ducklake_schema");
    read = schemas.read(db, {"schema_id", "begin_snapshot", "end_snapshot", "schema_name", "path", "path_is_relative"},
                        max_rows, [&] {
                            schema_row row{schemas.integer("schema_id"), schemas.life(), schemas.text("schema_name"),
                                           {schemas.text("path"), schemas.boolean("path_is_relative")}};
                            if (schemas.row_valid())
                                out.schemas.push_back(std::move(row));
                        });
    if (!read)
        return read.error();

    auto tables = reader("ducklake_table");
    read = tables.read(
        db, {"table_id", "begin_snapshot", "end_snapshot", "schema_id", "table_name", "path", "path_is_relative"},
        max_rows, [&] {
            table_row row{tables.integer("table_id"), tables.integer("schema_id"), tables.life(),
                          tables.text("table_name"), {tables.text("path"), tables.boolean("path_is_relative")}};
            if (tables.row_valid())
                out.tables.push_back(std::move(row));
        });
    if (!read)
        return read.error();

    auto data = reader("ducklake_data_file");
    read = data.read(db,
                     {"data_file_id", "table_id", "begin_snapshot", "end_snapshot", "path", "path_is_relative",
                      "record_count", "file_size_bytes", "footer_size", "file_format", "encryption_key"},
                     max_rows, [&] {
                         auto id = data.integer("data_file_id");
                         file_row row{false,
                                      id,
                                      id,
                                      data.integer("table_id"),
                                      data.life(),
                                      data.text("path"),
                                      data.boolean("path_is_relative"),
                                      data.text("record_count"),
                                      data.text("file_size_bytes"),
                                      data.text("footer_size"),
                                      data.text("file_format"),
                                      !data.text("encryption_key").value_or("").empty()};
                         if (data.row_valid() && kept.wanted(row))
                             out.files.push_back(std::move(row));
                     });
    if (!read)
        return read.error();

    auto deletes = reader("ducklake_delete_file");
    read = deletes.read(db,
                        {"delete_file_id", "data_file_id", "table_id", "begin_snapshot", "end_snapshot", "path",
                         "path_is_relative", "delete_count", "file_size_bytes", "footer_size", "format",
                         "encryption_key"},
                        max_rows, [&] {
                            file_row row{true,
                                         deletes.integer("delete_file_id"),
                                         deletes.integer("data_file_id"),
                                         deletes.integer("table_id"),
                                         deletes.life(),
                                         deletes.text("path"),
                                         deletes.boolean("path_is_relative"),
                                         deletes.text("delete_count"),
                                         deletes.text("file_size_bytes"),
                                         deletes.text("footer_size"),
                                         deletes.text("format"),
                                         !deletes.text("encryption_key").value_or("").empty()};
                            if (deletes.row_valid() && kept.wanted(row))
                                out.files.push_back(std::move(row));
                        });
    if (!read)
        return read.error();

    if (kept.over_memory())
        return make_error(catalog_errc::over_memory_limit,
                          name + ": its " + std::to_string(kept.count()) + " live data and delete files would take " +
                              "more than the " + std::to_string(options.max_memory >> 20) +
                              " MiB of memory this mirror allows one version's catalog (memory_limit)");

    auto columns = reader("ducklake_column");
    read = columns.read(db, {"table_id", "column_id", "column_name"}, max_rows, [&] {
        column_row row{columns.integer("table_id"), columns.integer("column_id"), columns.text("column_name")};
        if (columns.row_valid())
            out.columns.push_back(std::move(row));
    });
    if (!read)
        return read.error();

    auto views = reader("ducklake_view");
    read = views.read(db, {"schema_id", "begin_snapshot", "end_snapshot", "view_name", "dialect", "sql"}, max_rows, [&] {
        view_row row{views.integer("schema_id"), views.life(), views.text("view_name"), views.text("dialect"),
                     views.text("sql")};
        if (views.row_valid())
            out.views.push_back(std::move(row));
    });
    if (!read)
        return read.error();
    return out;
}

} // namespace mirror::catalog
