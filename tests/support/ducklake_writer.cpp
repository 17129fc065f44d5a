#include "tests/support/ducklake_writer.hpp"

#include "core/catalog/duckdb_session.hpp"
#include "tests/support/uuid7.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <set>
#include <stdexcept>
#include <string_view>

namespace mirror::test {

namespace {

namespace fs = std::filesystem;
using catalog::duckdb_session;

// The metadata tables DuckLake 0.3 and 1.0 both have, column for column as the ducklake
// extension creates them (duckdb/ducklake, src/storage/ducklake_metadata_manager.cpp,
// GetCreateTableStatements, and the 0.2 -> 0.3 migration that shaped the 0.3 tables).
constexpr std::string_view shared_tables = R"sql(
CREATE TABLE ducklake_metadata(key VARCHAR NOT NULL, value VARCHAR NOT NULL, scope VARCHAR, scope_id BIGINT);
CREATE TABLE ducklake_snapshot(snapshot_id BIGINT PRIMARY KEY, snapshot_time TIMESTAMPTZ, schema_version BIGINT,
    next_catalog_id BIGINT, next_file_id BIGINT);
CREATE TABLE ducklake_snapshot_changes(snapshot_id BIGINT PRIMARY KEY, changes_made VARCHAR, author VARCHAR,
    commit_message VARCHAR, commit_extra_info VARCHAR);
CREATE TABLE ducklake_schema(schema_id BIGINT PRIMARY KEY, schema_uuid UUID, begin_snapshot BIGINT,
    end_snapshot BIGINT, schema_name VARCHAR, path VARCHAR, path_is_relative BOOLEAN);
CREATE TABLE ducklake_table(table_id BIGINT, table_uuid UUID, begin_snapshot BIGINT, end_snapshot BIGINT,
    schema_id BIGINT, table_name VARCHAR, path VARCHAR, path_is_relative BOOLEAN);
CREATE TABLE ducklake_view(view_id BIGINT, view_uuid UUID, begin_snapshot BIGINT, end_snapshot BIGINT,
    schema_id BIGINT, view_name VARCHAR, dialect VARCHAR, sql VARCHAR, column_aliases VARCHAR);
CREATE TABLE ducklake_tag(object_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, key VARCHAR, value VARCHAR);
CREATE TABLE ducklake_column_tag(table_id BIGINT, column_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT,
    key VARCHAR, value VARCHAR);
CREATE TABLE ducklake_file_column_stats(data_file_id BIGINT, table_id BIGINT, column_id BIGINT,
    column_size_bytes BIGINT, value_count BIGINT, null_count BIGINT, min_value VARCHAR, max_value VARCHAR,
    contains_nan BOOLEAN, extra_stats VARCHAR);
CREATE TABLE ducklake_table_stats(table_id BIGINT, record_count BIGINT, next_row_id BIGINT, file_size_bytes BIGINT);
CREATE TABLE ducklake_table_column_stats(table_id BIGINT, column_id BIGINT, contains_null BOOLEAN,
    contains_nan BOOLEAN, min_value VARCHAR, max_value VARCHAR, extra_stats VARCHAR);
CREATE TABLE ducklake_partition_info(partition_id BIGINT, table_id BIGINT, begin_snapshot BIGINT,
    end_snapshot BIGINT);
CREATE TABLE ducklake_partition_column(partition_id BIGINT, table_id BIGINT, partition_key_index BIGINT,
    column_id BIGINT, transform VARCHAR);
CREATE TABLE ducklake_file_partition_value(data_file_id BIGINT, table_id BIGINT, partition_key_index BIGINT,
    partition_value VARCHAR);
CREATE TABLE ducklake_files_scheduled_for_deletion(data_file_id BIGINT, path VARCHAR, path_is_relative BOOLEAN,
    schedule_start TIMESTAMPTZ);
CREATE TABLE ducklake_inlined_data_tables(table_id BIGINT, table_name VARCHAR, schema_version BIGINT);
CREATE TABLE ducklake_column_mapping(mapping_id BIGINT, table_id BIGINT, type VARCHAR);
CREATE TABLE ducklake_name_mapping(mapping_id BIGINT, column_id BIGINT, source_name VARCHAR,
    target_field_id BIGINT, parent_column BIGINT, is_partition BOOLEAN);
)sql";

// 0.3 (DuckDB 1.4): partial_file_info on data files, no partial_max, no column default
// kinds, global schema versions. 22 tables in all (the 0.3 specification says so).
constexpr std::string_view tables_0_3 = R"sql(
CREATE TABLE ducklake_data_file(data_file_id BIGINT PRIMARY KEY, table_id BIGINT, begin_snapshot BIGINT,
    end_snapshot BIGINT, file_order BIGINT, path VARCHAR, path_is_relative BOOLEAN, file_format VARCHAR,
    record_count BIGINT, file_size_bytes BIGINT, footer_size BIGINT, row_id_start BIGINT, partition_id BIGINT,
    encryption_key VARCHAR, partial_file_info VARCHAR, mapping_id BIGINT);
CREATE TABLE ducklake_delete_file(delete_file_id BIGINT PRIMARY KEY, table_id BIGINT, begin_snapshot BIGINT,
    end_snapshot BIGINT, data_file_id BIGINT, path VARCHAR, path_is_relative BOOLEAN, format VARCHAR,
    delete_count BIGINT, file_size_bytes BIGINT, footer_size BIGINT, encryption_key VARCHAR);
CREATE TABLE ducklake_column(column_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, table_id BIGINT,
    column_order BIGINT, column_name VARCHAR, column_type VARCHAR, initial_default VARCHAR, default_value VARCHAR,
    nulls_allowed BOOLEAN, parent_column BIGINT);
CREATE TABLE ducklake_schema_versions(begin_snapshot BIGINT, schema_version BIGINT);
)sql";

// 1.0 (DuckDB 1.5): partial_max replaces partial_file_info, per-table schema versions,
// column default kinds, plus variant stats, macros and sort keys. 28 tables in all.
constexpr std::string_view tables_1_0 = R"sql(
CREATE TABLE ducklake_data_file(data_file_id BIGINT PRIMARY KEY, table_id BIGINT, begin_snapshot BIGINT,
    end_snapshot BIGINT, file_order BIGINT, path VARCHAR, path_is_relative BOOLEAN, file_format VARCHAR,
    record_count BIGINT, file_size_bytes BIGINT, footer_size BIGINT, row_id_start BIGINT, partition_id BIGINT,
    encryption_key VARCHAR, mapping_id BIGINT, partial_max BIGINT);
CREATE TABLE ducklake_delete_file(delete_file_id BIGINT PRIMARY KEY, table_id BIGINT, begin_snapshot BIGINT,
    end_snapshot BIGINT, data_file_id BIGINT, path VARCHAR, path_is_relative BOOLEAN, format VARCHAR,
    delete_count BIGINT, file_size_bytes BIGINT, footer_size BIGINT, encryption_key VARCHAR, partial_max BIGINT);
CREATE TABLE ducklake_column(column_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, table_id BIGINT,
    column_order BIGINT, column_name VARCHAR, column_type VARCHAR, initial_default VARCHAR, default_value VARCHAR,
    nulls_allowed BOOLEAN, parent_column BIGINT, default_value_type VARCHAR, default_value_dialect VARCHAR);
CREATE TABLE ducklake_schema_versions(begin_snapshot BIGINT, schema_version BIGINT, table_id BIGINT);
CREATE TABLE ducklake_file_variant_stats(data_file_id BIGINT, table_id BIGINT, column_id BIGINT,
    variant_path VARCHAR, shredded_type VARCHAR, column_size_bytes BIGINT, value_count BIGINT, null_count BIGINT,
    min_value VARCHAR, max_value VARCHAR, contains_nan BOOLEAN, extra_stats VARCHAR);
CREATE TABLE ducklake_macro(schema_id BIGINT, macro_id BIGINT, macro_name VARCHAR, begin_snapshot BIGINT,
    end_snapshot BIGINT);
CREATE TABLE ducklake_macro_impl(macro_id BIGINT, impl_id BIGINT, dialect VARCHAR, sql VARCHAR, type VARCHAR);
CREATE TABLE ducklake_macro_parameters(macro_id BIGINT, impl_id BIGINT, column_id BIGINT, parameter_name VARCHAR,
    parameter_type VARCHAR, default_value VARCHAR, default_value_type VARCHAR);
CREATE TABLE ducklake_sort_info(sort_id BIGINT, table_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT);
CREATE TABLE ducklake_sort_expression(sort_id BIGINT, table_id BIGINT, sort_key_index BIGINT, expression VARCHAR,
    dialect VARCHAR, sort_direction VARCHAR, null_order VARCHAR);
)sql";

// Field ids DuckLake gives the columns of a positional delete file (Iceberg's reserved ids).
constexpr std::string_view delete_field_ids = "{file_path: 2147483546, pos: 2147483545}";

std::string sql_text(std::string_view text) {
    std::string out = "'";
    for (char c : text)
        out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
}

std::string sql_name(std::string_view name) {
    std::string out = "\"";
    for (char c : name)
        out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

std::string number(std::uint64_t n) { return std::to_string(n); }
std::string number(std::optional<std::uint64_t> n) { return n ? std::to_string(*n) : "NULL"; }
std::string boolean(bool b) { return b ? "true" : "false"; }

bool visible(std::uint64_t begin, std::optional<std::uint64_t> end, std::uint64_t snapshot) {
    return begin <= snapshot && (!end || snapshot < *end);
}

std::string dir_of(std::string const& path, std::string const& name) { return path.empty() ? name + "/" : path; }

void run(duckdb_session& session, std::string const& sql) {
    auto done = session.query(sql);
    if (!done)
        throw std::runtime_error(done.error().message);
}

std::size_t schema_index(catalog_model const& model, std::string const& name, std::string const& user) {
    for (std::size_t i = 0; i < model.schemas.size(); ++i)
        if (model.schemas[i].name == name)
            return i;
    throw std::runtime_error(user + ": the model has no schema '" + name + "'");
}

/// The ids and snapshot bookkeeping write_catalog derives from the model.
struct layout {
    std::vector<std::uint64_t> schema_id, schema_begin;
    std::vector<std::vector<std::uint64_t>> file_id;   ///< [table][file]: data_file_id
    std::vector<std::vector<std::uint64_t>> delete_id; ///< [table][file]: delete_file_id (if any)
    std::vector<std::uint64_t> snapshots;              ///< sorted
    std::set<std::uint64_t> schema_changes;            ///< snapshots that change the schema
    std::uint64_t last = 0;

    std::uint64_t schema_version(std::uint64_t s) const {
        return static_cast<std::uint64_t>(
            std::count_if(schema_changes.begin(), schema_changes.end(), [s](auto c) { return c > 0 && c <= s; }));
    }
};

layout plan_layout(catalog_model const& model) {
    layout out;
    std::uint64_t const tables = model.tables.size(), views = model.views.size();
    for (std::size_t i = 0; i < model.schemas.size(); ++i) {
        out.schema_id.push_back(i == 0 ? 0 : tables + views + i);
        std::optional<std::uint64_t> begin;
        for (auto const& t : model.tables)
            if (t.schema == model.schemas[i].name)
                begin = std::min(begin.value_or(t.begin), t.begin);
        for (auto const& v : model.views)
            if (v.schema == model.schemas[i].name)
                begin = std::min(begin.value_or(v.begin), v.begin);
        out.schema_begin.push_back(i == 0 ? 0 : begin.value_or(1));
        out.schema_changes.insert(out.schema_begin.back());
    }
    std::uint64_t next_file = 0; // one counter for data and delete files, in model order
    for (auto const& t : model.tables) {
        auto& ids = out.file_id.emplace_back();
        auto& deletes = out.delete_id.emplace_back();
        for (auto const& f : t.files) {
            ids.push_back(next_file++);
            deletes.push_back(f.deletes ? next_file++ : 0);
        }
        out.schema_changes.insert(t.begin);
        if (t.end)
            out.schema_changes.insert(*t.end);
        for (auto const& c : t.columns) {
            out.schema_changes.insert(c.begin);
            if (c.end)
                out.schema_changes.insert(*c.end);
        }
    }
    for (auto const& v : model.views)
        out.schema_changes.insert(v.begin);
    out.snapshots = model.snapshots;
    std::sort(out.snapshots.begin(), out.snapshots.end());
    out.last = out.snapshots.empty() ? 0 : out.snapshots.back();
    return out;
}

// ducklake_snapshot and ducklake_snapshot_changes: ids only grow, so next_catalog_id and
// next_file_id are one past the largest id of anything that exists by that snapshot.
std::string snapshot_rows(catalog_model const& model, layout const& l) {
    std::string sql;
    std::uint64_t const tables = model.tables.size();
    for (auto s : l.snapshots) {
        std::uint64_t next_catalog = 1, next_file = 0;
        std::vector<std::string> changes;
        auto note = [&](std::string change) {
            if (std::find(changes.begin(), changes.end(), change) == changes.end())
                changes.push_back(std::move(change));
        };
        for (std::size_t i = 0; i < model.schemas.size(); ++i) {
            if (l.schema_begin[i] <= s)
                next_catalog = std::max(next_catalog, l.schema_id[i] + 1);
            if (l.schema_begin[i] == s)
                note("created_schema:" + sql_name(model.schemas[i].name));
        }
        for (std::size_t t = 0; t < tables; ++t) {
            auto const& table = model.tables[t];
            std::string const id = number(t + 1);
            if (table.begin <= s)
                next_catalog = std::max<std::uint64_t>(next_catalog, t + 2);
            if (table.begin == s)
                note("created_table:" + sql_name(table.schema) + "." + sql_name(table.name));
            if (table.end == s)
                note("dropped_table:" + id);
            for (auto const& c : table.columns)
                if ((c.begin == s && c.begin != table.begin) || (c.end == s && table.end != s))
                    note("altered_table:" + id);
            for (std::size_t f = 0; f < table.files.size(); ++f) {
                auto const& file = table.files[f];
                if (file.begin <= s)
                    next_file = std::max(next_file, l.file_id[t][f] + 1);
                if (file.begin == s)
                    note("inserted_into_table:" + id);
                if (file.end == s && table.end != s)
                    note("deleted_from_table:" + id);
                if (file.deletes && file.deletes->begin <= s)
                    next_file = std::max(next_file, l.delete_id[t][f] + 1);
                if (file.deletes && file.deletes->begin == s)
                    note("deleted_from_table:" + id);
            }
        }
        for (std::size_t v = 0; v < model.views.size(); ++v) {
            if (model.views[v].begin <= s)
                next_catalog = std::max<std::uint64_t>(next_catalog, tables + v + 2);
            if (model.views[v].begin == s)
                note("created_view:" + sql_name(model.views[v].schema) + "." + sql_name(model.views[v].name));
        }
        std::string joined;
        for (auto const& c : changes)
            joined += (joined.empty() ? "" : ",") + c;
        sql += "INSERT INTO ducklake_snapshot VALUES (" + number(s) + ", now() - to_minutes(" + number(l.last - s) +
               "), " + number(l.schema_version(s)) + ", " + number(next_catalog) + ", " + number(next_file) + ");\n";
        sql += "INSERT INTO ducklake_snapshot_changes VALUES (" + number(s) + ", " +
               (joined.empty() ? std::string("NULL") : sql_text(joined)) + ", NULL, NULL, NULL);\n";
    }
    return sql;
}

// Schemas, tables, views and columns, with the values the extension writes (uuid(),
// path = name + "/", dialect duckdb, no column aliases, no defaults, nullable).
std::string object_rows(catalog_model const& model, layout const& l, bool v03) {
    std::string sql;
    for (std::size_t i = 0; i < model.schemas.size(); ++i) {
        auto const& schema = model.schemas[i];
        sql += "INSERT INTO ducklake_schema VALUES (" + number(l.schema_id[i]) + ", uuid(), " +
               number(l.schema_begin[i]) + ", NULL, " + sql_text(schema.name) + ", " +
               sql_text(dir_of(schema.path, schema.name)) + ", " + boolean(schema.relative) + ");\n";
    }
    for (std::size_t t = 0; t < model.tables.size(); ++t) {
        auto const& table = model.tables[t];
        std::string const id = number(t + 1);
        auto schema = schema_index(model, table.schema, table.name);
        sql += "INSERT INTO ducklake_table VALUES (" + id + ", uuid(), " + number(table.begin) + ", " +
               number(table.end) + ", " + number(l.schema_id[schema]) + ", " + sql_text(table.name) + ", " +
               sql_text(dir_of(table.path, table.name)) + ", " + boolean(table.relative) + ");\n";
        for (auto const& c : table.columns)
            sql += "INSERT INTO ducklake_column(column_id, begin_snapshot, end_snapshot, table_id, column_order, "
                   "column_name, column_type, nulls_allowed" +
                   std::string(v03 ? "" : ", default_value_type") + ") VALUES (" + number(c.id) + ", " +
                   number(c.begin) + ", " + number(c.end) + ", " + id + ", " + number(c.id) + ", " + sql_text(c.name) +
                   ", " + sql_text(c.type) + ", true" + (v03 ? "" : ", 'literal'") + ");\n";
    }
    for (std::size_t v = 0; v < model.views.size(); ++v) {
        auto const& view = model.views[v];
        auto schema = schema_index(model, view.schema, view.name);
        sql += "INSERT INTO ducklake_view VALUES (" + number(model.tables.size() + v + 1) + ", uuid(), " +
               number(view.begin) + ", NULL, " + number(l.schema_id[schema]) + ", " + sql_text(view.name) +
               ", 'duckdb', " + sql_text(view.sql) + ", '');\n";
    }
    return sql;
}

// Data and delete files, table statistics and schema versions.
std::string file_rows(catalog_model const& model, layout const& l, bool v03) {
    std::string sql;
    for (std::size_t t = 0; t < model.tables.size(); ++t) {
        auto const& table = model.tables[t];
        std::string const id = number(t + 1);
        std::uint64_t next_row = 0, live_rows = 0, live_bytes = 0;
        for (std::size_t f = 0; f < table.files.size(); ++f) {
            auto const& file = table.files[f];
            sql += "INSERT INTO ducklake_data_file(data_file_id, table_id, begin_snapshot, end_snapshot, path, "
                   "path_is_relative, file_format, record_count, file_size_bytes, footer_size, row_id_start) VALUES (" +
                   number(l.file_id[t][f]) + ", " + id + ", " + number(file.begin) + ", " + number(file.end) + ", " +
                   sql_text(file.path) + ", " + boolean(file.relative) + ", 'parquet', " + number(file.rows) + ", " +
                   number(file.bytes) + ", " + number(file.footer_bytes) + ", " + number(next_row) + ");\n";
            next_row += file.rows;
            if (visible(file.begin, file.end, l.last)) {
                live_rows += file.rows;
                live_bytes += file.bytes;
            }
            if (!file.deletes)
                continue;
            auto const& del = *file.deletes;
            sql += "INSERT INTO ducklake_delete_file(delete_file_id, table_id, begin_snapshot, end_snapshot, "
                   "data_file_id, path, path_is_relative, format, delete_count, file_size_bytes) VALUES (" +
                   number(l.delete_id[t][f]) + ", " + id + ", " + number(del.begin) + ", " + number(del.end) + ", " +
                   number(l.file_id[t][f]) + ", " + sql_text(del.path) + ", " + boolean(del.relative) +
                   ", 'parquet', " + number(del.rows) + ", " + number(del.bytes) + ");\n";
            if (visible(file.begin, file.end, l.last) && visible(del.begin, del.end, l.last))
                live_rows -= std::min(live_rows, del.rows);
        }
        sql += "INSERT INTO ducklake_table_stats VALUES (" + id + ", " + number(live_rows) + ", " + number(next_row) +
               ", " + number(live_bytes) + ");\n";
        if (!v03) { // 1.0 keeps schema versions per table: where the table began and each ALTER
            std::set<std::uint64_t> points{table.begin};
            for (auto const& c : table.columns)
                if (c.begin > table.begin)
                    points.insert(c.begin);
            for (auto p : points)
                sql += "INSERT INTO ducklake_schema_versions VALUES (" + number(p) + ", " +
                       number(l.schema_version(p)) + ", " + id + ");\n";
        }
    }
    if (v03) // 0.3 keeps them globally: the first snapshot of each schema version
        for (auto p : l.schema_changes)
            if (p == 0 || l.schema_version(p) != l.schema_version(p - 1))
                sql += "INSERT INTO ducklake_schema_versions VALUES (" + number(p) + ", " +
                       number(l.schema_version(p)) + ");\n";
    return sql;
}

// "ducklake_inlined_data_<table_id>_<schema_version>" -> the two numbers.
std::optional<std::pair<std::uint64_t, std::uint64_t>> inlined_ids(std::string_view name) {
    constexpr std::string_view prefix = "ducklake_inlined_data_";
    if (!name.starts_with(prefix))
        return std::nullopt;
    name.remove_prefix(prefix.size());
    auto parse = [](std::string_view digits) -> std::optional<std::uint64_t> {
        std::uint64_t n = 0;
        auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
        if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size())
            return std::nullopt;
        return n;
    };
    auto under = name.find('_');
    if (under == std::string_view::npos)
        return std::nullopt;
    auto table = parse(name.substr(0, under)), version = parse(name.substr(under + 1));
    if (!table || !version)
        return std::nullopt;
    return std::pair{*table, *version};
}

// Inlined-data tables: the system columns of formats before 1.1, then the table's current
// columns (or one BIGINT when the name names no table of the model).
std::string inlined_rows(catalog_model const& model, layout const& l) {
    std::string sql;
    for (auto const& [name, rows] : model.inlined) {
        auto ids = inlined_ids(name);
        std::string columns = "row_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT";
        std::string values = "range, " + number(l.last) + ", NULL";
        bool any = false;
        if (ids && ids->first >= 1 && ids->first <= model.tables.size())
            for (auto const& c : model.tables[ids->first - 1].columns)
                if (!c.end) {
                    columns += ", " + sql_name(c.name) + " " + c.type;
                    values += ", TRY_CAST(range AS " + c.type + ")";
                    any = true;
                }
        if (!any) {
            columns += ", value BIGINT";
            values += ", range";
        }
        sql += "CREATE TABLE " + sql_name(name) + "(" + columns + ");\n";
        sql += "INSERT INTO ducklake_inlined_data_tables VALUES (" + (ids ? number(ids->first) : std::string("NULL")) +
               ", " + sql_text(name) + ", " + (ids ? number(ids->second) : std::string("NULL")) + ");\n";
        if (rows > 0)
            sql += "INSERT INTO " + sql_name(name) + " SELECT " + values + " FROM range(" + number(rows) + ");\n";
    }
    return sql;
}

bool has_rename(model_table const& table) {
    for (auto const& a : table.columns)
        for (auto const& b : table.columns)
            if (a.id == b.id && a.name != b.name)
                return true;
    return false;
}

// A path relative to data_dir, resolved as spec/ducklake-catalog.md section 5 says.
std::string relative_to_data(catalog_model const& model, model_table const& table, std::string const& path,
                             bool relative) {
    auto const& schema = model.schemas[schema_index(model, table.schema, table.name)];
    std::string const schema_dir = dir_of(schema.path, schema.name), table_dir = dir_of(table.path, table.name);
    if (schema.relative && table.relative && relative)
        return schema_dir + table_dir + path;
    std::string full = !relative ? path : !table.relative ? table_dir + path : schema_dir + table_dir + path;
    return full.starts_with(model.data_path) ? full.substr(model.data_path.size()) : full;
}

struct parquet_written {
    std::string name; ///< the file name, in `dir`
    std::uint64_t bytes = 0;
    std::optional<std::uint64_t> footer;
};

// Writes `select` as ducklake-<uuidv7><suffix>.parquet in `dir`, columns carrying
// `field_ids` (DuckLake's column ids), as the extension names and writes its files.
parquet_written write_parquet(duckdb_session& session, fs::path const& dir, std::string const& select,
                              std::string_view field_ids, std::string const& suffix) {
    fs::create_directories(dir);
    parquet_written out{"ducklake-" + next_version_id() + suffix + ".parquet"};
    auto const file = (dir / out.name).string();
    run(session,
        "COPY (" + select + ") TO " + sql_text(file) + " (FORMAT parquet, FIELD_IDS " + std::string(field_ids) + ")");
    out.bytes = fs::file_size(dir / out.name);
    // DuckDB 1.5's parquet_file_metadata has footer_size; without it the footer stays unset.
    auto meta = session.query("SELECT footer_size FROM parquet_file_metadata(" + sql_text(file) + ")");
    if (meta && meta->rows.size() == 1 && meta->rows[0].size() == 1 && meta->rows[0][0])
        out.footer = std::stoull(*meta->rows[0][0]);
    return out;
}

} // namespace

void write_catalog(fs::path const& file, catalog_model const& model) {
    if (fs::exists(file))
        throw std::runtime_error(file.string() + ": exists already");
    auto const l = plan_layout(model);
    bool const v03 = model.format == "0.3";
    // Built before opening, so that a model naming a missing schema leaves no file behind.
    std::string sql = "BEGIN TRANSACTION;\n" + std::string(shared_tables) + std::string(v03 ? tables_0_3 : tables_1_0);
    sql += "INSERT INTO ducklake_metadata VALUES ('version', " + sql_text(model.format) + ", NULL, NULL);\n";
    sql += "INSERT INTO ducklake_metadata SELECT 'created_by', 'DuckDB ' || source_id, NULL, NULL FROM pragma_version();\n";
    sql += "INSERT INTO ducklake_metadata VALUES ('data_path', " + sql_text(model.data_path) + ", NULL, NULL);\n";
    sql += "INSERT INTO ducklake_metadata VALUES ('encrypted', 'false', NULL, NULL);\n";
    sql += snapshot_rows(model, l) + object_rows(model, l, v03) + file_rows(model, l, v03) + inlined_rows(model, l);
    sql += "COMMIT;\n";

    auto opened = duckdb_session::open(file, {.read_only = false});
    if (!opened)
        throw std::runtime_error(opened.error().message);
    auto& session = **opened;
    run(session, sql);
    for (auto const& extra : model.extra_sql)
        run(session, extra);
    run(session, "CHECKPOINT"); // a frozen catalog has no .wal beside it
}

std::string spec_query(std::string const& name, std::string const& snapshot) {
    std::ifstream in(fs::path(FDL_MIRROR_DUCKLAKE_SQL_DIR) / name);
    if (!in)
        return {};
    std::stringstream text;
    text << in.rdbuf();
    std::string sql = text.str();
    for (auto at = sql.find("{SNAPSHOT}"); at != std::string::npos; at = sql.find("{SNAPSHOT}", at + snapshot.size()))
        sql.replace(at, 10, snapshot);
    return sql;
}

std::string files_json_of(catalog_model const& model, std::uint64_t snapshot) {
    boost::json::object tables;
    for (auto const& table : model.tables) {
        if (!visible(table.begin, table.end, snapshot))
            continue;
        boost::json::array files;
        for (auto const& file : table.files) {
            if (!visible(file.begin, file.end, snapshot))
                continue;
            boost::json::object entry;
            entry["path"] = relative_to_data(model, table, file.path, file.relative);
            entry["rows"] = file.rows;
            entry["bytes"] = file.bytes;
            if (file.footer_bytes)
                entry["footer_bytes"] = *file.footer_bytes;
            if (file.deletes && visible(file.deletes->begin, file.deletes->end, snapshot)) {
                boost::json::object del;
                del["path"] = relative_to_data(model, table, file.deletes->path, file.deletes->relative);
                del["rows"] = file.deletes->rows;
                del["bytes"] = file.deletes->bytes;
                entry["deletes"] = std::move(del);
            }
            files.push_back(std::move(entry));
        }
        boost::json::object entry;
        entry["files"] = std::move(files);
        if (has_rename(table))
            entry["renamed_columns"] = true;
        tables[table.schema + "." + table.name] = std::move(entry);
    }
    boost::json::object top;
    top["tables"] = std::move(tables);
    return boost::json::serialize(top);
}

catalog_model one_file_catalog(std::string const& file_name) {
    catalog_model m;
    m.data_path = "/data/";
    m.snapshots = {0, 1};
    model_table t;
    t.name = "towns";
    t.columns = {{1, "id"}};
    t.files = {model_file{file_name, true, 1, 123, 10, 1}};
    m.tables = {t};
    return m;
}

catalog_model make_real_lake(fs::path const& data_root, std::string const& format) {
    catalog_model model;
    model.format = format;
    model.snapshots = {0, 1, 2, 3};
    model.schemas = {model_schema{}, model_schema{.name = "sales", .path = "eu_sales/"}};
    auto opened = duckdb_session::open(":memory:", {.read_only = false});
    if (!opened)
        throw std::runtime_error(opened.error().message);
    auto& session = **opened;

    fs::path const orders_dir = data_root / "main" / "orders", customers_dir = data_root / "eu_sales" / "customers";
    constexpr std::string_view orders_ids = "{id: 1, amount: 2}";
    auto orders = [&](int from, int to, double factor) {
        return write_parquet(session, orders_dir,
                             "SELECT i::BIGINT AS id, (i * " + std::to_string(factor) +
                                 ")::DOUBLE AS amount FROM range(" + std::to_string(from) + ", " + std::to_string(to) +
                                 ") r(i)",
                             orders_ids, "");
    };
    auto const a = orders(1, 6, 7.5), b = orders(6, 9, 7.5), c = orders(6, 10, 15.0);
    // Positions 1 and 3 (ids 2 and 4) of the first file, named by its full path as DuckLake does.
    auto const a_deletes = write_parquet(session, orders_dir,
                                         "SELECT " + sql_text(model.data_path + "main/orders/" + a.name) +
                                             "::VARCHAR AS file_path, pos::BIGINT AS pos FROM (VALUES (1), (3)) v(pos)",
                                         delete_field_ids, "-delete");
    auto const d = write_parquet(session, customers_dir,
                                 "SELECT * FROM (VALUES (1::BIGINT, 'Ada'), (2, 'Grace'), (3, 'Edsger')) v(id, name)",
                                 "{id: 1, name: 2}", "");

    model_table orders_table{.name = "orders", .columns = {{1, "id", "BIGINT"}, {2, "amount", "DOUBLE"}}};
    orders_table.files = {
        {.path = a.name,
         .rows = 5,
         .bytes = a.bytes,
         .footer_bytes = a.footer,
         .deletes = model_delete{.path = a_deletes.name, .rows = 2, .bytes = a_deletes.bytes, .begin = 2}},
        {.path = b.name, .rows = 3, .bytes = b.bytes, .footer_bytes = b.footer, .end = 3},
        {.path = c.name, .rows = 4, .bytes = c.bytes, .footer_bytes = c.footer, .begin = 3},
    };
    model_table customers{.schema = "sales", .name = "customers"};
    customers.columns = {{1, "id", "BIGINT"}, {2, "name", "VARCHAR", 1, 2}, {2, "full_name", "VARCHAR", 2}};
    customers.files = {model_file{.path = d.name, .rows = 3, .bytes = d.bytes, .footer_bytes = d.footer}};
    model.tables = {std::move(orders_table), std::move(customers)};
    model.views = {model_view{.name = "big_orders", .sql = "SELECT * FROM orders WHERE amount > 10"}};
    model.inlined = {{"ducklake_inlined_data_1_1", 0}};
    return model;
}

} // namespace mirror::test
