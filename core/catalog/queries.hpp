#pragma once
// The DuckLake metadata queries (spec/ducklake-catalog.md, section 7).

#include <string_view>

namespace mirror::catalog::queries {

/// Global settings: key, value for version, data_path, created_by, encrypted.
extern std::string_view const metadata;
/// snapshot_id of every retained snapshot, ascending.
extern std::string_view const snapshots;
/// Data and delete files visible at {SNAPSHOT}, with rel_path (NULL outside data_path).
extern std::string_view const live_files;
/// Tables visible at {SNAPSHOT}: table_id, schema_name, table_name, renamed_columns.
extern std::string_view const tables;
/// Views visible at {SNAPSHOT}: view_id, schema_name, view_name, dialect, sql, column_aliases.
extern std::string_view const views;
/// table_name of every catalog table that may hold inlined rows.
extern std::string_view const inlined_tables;

} // namespace mirror::catalog::queries
