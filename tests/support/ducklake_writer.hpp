#pragma once
// A DuckLake catalog writer for tests: writes the metadata tables of format 0.3 or 1.0
// (spec/ducklake-catalog.md, sections 3 and 6) into a DuckDB file with plain SQL, as the
// ducklake extension would, without the extension. Only built with DuckDB's C library.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mirror::test {

/// A delete file (ducklake_delete_file) applying to the data file that holds it.
struct model_delete {
    std::string path; ///< relative to the table path unless `relative` is false
    bool relative = true;
    std::uint64_t rows = 0, bytes = 0; ///< delete_count, file_size_bytes
    std::uint64_t begin = 1;
    std::optional<std::uint64_t> end;
};

/// A data file (ducklake_data_file) of a table.
struct model_file {
    std::string path; ///< relative to the table path unless `relative` is false
    bool relative = true;
    std::uint64_t rows = 0, bytes = 0; ///< record_count, file_size_bytes
    std::optional<std::uint64_t> footer_bytes;
    std::uint64_t begin = 1;
    std::optional<std::uint64_t> end;
    std::optional<model_delete> deletes;
};

/// One version of a column (one ducklake_column row); `id` is column_id and field id.
struct model_column {
    std::uint64_t id = 0;
    std::string name, type = "BIGINT";
    std::uint64_t begin = 1;
    std::optional<std::uint64_t> end;
};

struct model_table {
    std::string schema = "main";
    std::string name;
    std::string path; ///< "" means name + "/"
    bool relative = true;
    std::uint64_t begin = 1;
    std::optional<std::uint64_t> end;
    std::vector<model_column> columns;
    std::vector<model_file> files;
};

struct model_view {
    std::string schema = "main", name, sql;
    std::uint64_t begin = 1;
};

/// A schema. The first one of catalog_model::schemas has schema_id 0 and begins at
/// snapshot 0 (as DuckLake's "main"); any other begins with its first table or view (at
/// snapshot 1 when it has none) and takes a catalog id after the tables and views.
struct model_schema {
    std::string name = "main";
    std::string path; ///< "" means name + "/"
    bool relative = true;
};

struct catalog_model {
    /// "0.3" or "1.0"; any other string is written as given into metadata 'version' with
    /// the 1.0 tables (for tests of unknown formats).
    std::string format = "1.0";
    std::string data_path = "s3://origin.example/repo/data/";
    std::vector<std::uint64_t> snapshots = {0, 1}; ///< rows of ducklake_snapshot
    std::vector<model_schema> schemas = {model_schema{}};
    /// table_id = index + 1; a table whose columns have two rows with the same id and
    /// different names is a rename.
    std::vector<model_table> tables;
    std::vector<model_view> views; ///< view_id after the table ids
    /// ducklake_inlined_data_<table_id>_<n> tables to register and fill with that many
    /// rows. A name not of that shape is registered with NULL table_id and schema_version.
    std::vector<std::pair<std::string, std::uint64_t>> inlined;
    std::vector<std::string> extra_sql; ///< run last, for hostile variants
};

/// Writes the catalog as a DuckDB file at `file` (which must not exist), checkpointed (no
/// .wal left). File ids come from one counter in model order (each delete file right
/// after its data file); snapshot rows carry consistent next_catalog_id/next_file_id.
/// Throws std::runtime_error with DuckDB's message on failure, or when `file` exists or a
/// table or view names a schema the model lacks.
void write_catalog(std::filesystem::path const& file, catalog_model const& model);

/// The files.json text (spec/versions.en.md, files.json) that agrees with the model at
/// `snapshot`: every table visible then, keyed "schema.table", in table order; its data
/// files visible then in data_file_id order, with `path` relative to data_dir (schema
/// path + table path + file path; an absolute level is resolved against data_path and the
/// prefix stripped, and a file outside data_path keeps its full path), rows, bytes,
/// footer_bytes when set, deletes when a delete is visible; "renamed_columns": true (only
/// written when true) when a column id of the table has two names.
std::string files_json_of(catalog_model const& model, std::uint64_t snapshot);

/// The smallest lake a reader has something to read in: data_path "/data/", snapshots 0
/// and 1, table "towns" (1: id) with one live data file `file_name` of 123 bytes and 10
/// rows. Nothing is written.
catalog_model one_file_catalog(std::string const& file_name);

/// A realistic lake. Writes real Parquet files with DuckDB under `data_root` (the
/// repository's data_dir on disk) and returns the model that describes them, with their
/// real sizes and footer sizes. Snapshots 0-3: schema "main" (path "main/") with table
/// "orders" (1: id, amount) whose first file gets a delete file (file_path, pos) at
/// snapshot 2 and whose second file is replaced at snapshot 3; schema "sales" (path
/// "eu_sales/") with table "customers" (2: id, name) whose column 2 is renamed to
/// full_name at snapshot 2; view main.big_orders; an empty registered inlined-data table
/// of orders. `format` is "0.3" or "1.0". Throws std::runtime_error on failure.
catalog_model make_real_lake(std::filesystem::path const& data_root, std::string const& format);

/// The spec's query `name` (tests/data/ducklake-sql, such as "10_live_files.sql") with
/// each {SNAPSHOT} replaced by `snapshot` (a number, or SQL such as a subquery); "" when
/// the file cannot be read.
std::string spec_query(std::string const& name, std::string const& snapshot = "0");

} // namespace mirror::test
