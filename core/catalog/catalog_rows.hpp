#pragma once
// The rows of a frozen catalog's metadata tables that the reader needs, read whole from
// its base tables by plain column selects, typed in C++. Filtering by snapshot, joining
// and resolving paths happen in catalog_reader.cpp and resolve.cpp, never in SQL.

#include "core/catalog/catalog_reader.hpp"
#include "core/catalog/duckdb_session.hpp"
#include "core/catalog/resolve.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mirror::catalog {

struct setting_row {
    std::optional<std::string> key, value;
    bool global = false; ///< scope IS NULL
};

struct schema_row {
    std::optional<std::int64_t> id;
    lifetime life;
    std::optional<std::string> name;
    path_level level;
};

struct table_row {
    std::optional<std::int64_t> id, schema_id;
    lifetime life;
    std::optional<std::string> name;
    path_level level;
};

/// A row of ducklake_data_file or ducklake_delete_file. Counts stay text: the reader says
/// which file has one that is not a non-negative integer.
struct file_row {
    bool is_delete = false;
    std::optional<std::int64_t> id;           ///< data_file_id or delete_file_id
    std::optional<std::int64_t> data_file_id; ///< for a delete file, the data file it applies to
    std::optional<std::int64_t> table_id;
    lifetime life;
    std::optional<std::string> path;
    std::optional<bool> relative;
    std::optional<std::string> rows, bytes, footer; ///< record_count/delete_count, file_size_bytes, footer_size
    std::optional<std::string> format; ///< file_format (data) or format (delete): "parquet"
    bool has_key = false;              ///< encryption_key is set (not NULL, not empty)
};

struct column_row {
    std::optional<std::int64_t> table_id, column_id;
    std::optional<std::string> name;
};

struct view_row {
    std::optional<std::int64_t> schema_id;
    lifetime life;
    std::optional<std::string> name, dialect, sql;
};

struct catalog_rows {
    std::vector<setting_row> settings;
    std::vector<std::optional<std::string>> snapshot_ids; ///< as stored; checked by the reader
    std::vector<schema_row> schemas;
    std::vector<table_row> tables;
    std::vector<file_row> files; ///< data files, then delete files, each in stored order
    std::vector<column_row> columns;
    std::vector<view_row> views;
    /// Rows left out because a value is not of its column's kind (catalog_errc::bad_catalog).
    std::vector<error> problems;
};

/// Reads the rows of the attached catalog's metadata tables (run check_catalog_objects
/// first: it proves they are base tables computing nothing). At most options.max_files
/// rows per table (too_large past it). Data and delete files visible neither at the last
/// snapshot nor at one of options.snapshots are left out, so that a long history of dead
/// files costs no memory (rows with a negative snapshot stay, for the reader to report).
/// Fails with query_failed (a column the reader needs is missing or of a type it does not
/// read), too_large, timed_out, or over_memory_limit when the files kept would already
/// take more than options.max_memory as contents; `name` in the message.
result<catalog_rows> read_catalog_rows(duckdb_session& db, std::string const& name, read_options const& options);

} // namespace mirror::catalog
