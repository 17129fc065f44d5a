// The SQL the catalog reader runs, from the project spec (spec/ducklake-sql, proven on
// DuckDB 1.5.6 against DuckLake 0.3, 1.0 and 1.1 table definitions).

#include "core/catalog/queries.hpp"

namespace mirror::catalog::queries {

std::string_view const metadata = R"sql(
-- Global catalog settings the daemon needs (format version, data_path).
-- Settings scoped to a schema/table have scope = 'schema' / 'table'; only global ones matter here.
SELECT key, value
FROM ducklake_metadata
WHERE scope IS NULL
  AND key IN ('version', 'data_path', 'created_by', 'encrypted')
ORDER BY key;
)sql";

std::string_view const snapshots = R"sql(
-- Every retained snapshot, oldest first; the last one is the catalog's state.
SELECT snapshot_id FROM ducklake_snapshot ORDER BY snapshot_id;
)sql";

std::string_view const live_files = R"sql(
-- Every data file and delete file visible at snapshot {SNAPSHOT}, with its path resolved
-- (file path -> table path -> schema path -> data_path) and made relative to data_path.
-- {SNAPSHOT}: a decimal snapshot id, or the text (SELECT max(snapshot_id) FROM ducklake_snapshot).
WITH params AS (
    SELECT CAST({SNAPSHOT} AS BIGINT) AS s,
           (SELECT value FROM ducklake_metadata WHERE key = 'data_path' AND scope IS NULL) AS data_path
),
files AS (
    SELECT 'data' AS kind, f.data_file_id AS file_id, f.data_file_id, f.table_id,
           f.path, f.path_is_relative, f.file_format AS format, f.record_count AS row_count, f.file_size_bytes,
           f.footer_size
    FROM ducklake_data_file f, params p
    WHERE p.s >= f.begin_snapshot AND (p.s < f.end_snapshot OR f.end_snapshot IS NULL)
    UNION ALL
    SELECT 'delete', d.delete_file_id, d.data_file_id, d.table_id,
           d.path, d.path_is_relative, d.format, d.delete_count, d.file_size_bytes, d.footer_size
    FROM ducklake_delete_file d, params p
    WHERE p.s >= d.begin_snapshot AND (p.s < d.end_snapshot OR d.end_snapshot IS NULL)
),
resolved AS (
    SELECT f.*, sc.schema_name, t.table_name, p.data_path,
           -- NULL path / path_is_relative (catalogs migrated from 0.1) mean "same as parent"
           COALESCE(f.path_is_relative, true) AND COALESCE(t.path_is_relative, true)
               AND COALESCE(sc.path_is_relative, true) AS all_relative,
           COALESCE(sc.path, '') || COALESCE(t.path, '') || f.path AS relative_chain,
           CASE WHEN NOT COALESCE(f.path_is_relative, true)  THEN f.path
                WHEN NOT COALESCE(t.path_is_relative, true)  THEN COALESCE(t.path, '') || f.path
                WHEN NOT COALESCE(sc.path_is_relative, true) THEN COALESCE(sc.path, '') || COALESCE(t.path, '') || f.path
                ELSE p.data_path || COALESCE(sc.path, '') || COALESCE(t.path, '') || f.path
           END AS full_path
    FROM files f
    CROSS JOIN params p
    LEFT JOIN ducklake_table t
           ON t.table_id = f.table_id
          AND p.s >= t.begin_snapshot AND (p.s < t.end_snapshot OR t.end_snapshot IS NULL)
    LEFT JOIN ducklake_schema sc
           ON sc.schema_id = t.schema_id
          AND p.s >= sc.begin_snapshot AND (p.s < sc.end_snapshot OR sc.end_snapshot IS NULL)
)
SELECT kind, file_id, data_file_id, schema_name, table_name, format, row_count, file_size_bytes, footer_size,
       CASE WHEN all_relative THEN relative_chain
            WHEN starts_with(full_path, data_path) THEN substr(full_path, length(data_path) + 1)
       END AS rel_path,          -- NULL => file lies outside data_path: refuse to mirror
       full_path
FROM resolved
ORDER BY kind, file_id;
)sql";

std::string_view const tables = R"sql(
-- Tables visible at snapshot {SNAPSHOT}, and whether a column of theirs ever carried two
-- names (within the history still in the catalog; spec 21_any_rename.sql, per table).
WITH params AS (SELECT CAST({SNAPSHOT} AS BIGINT) AS s)
SELECT t.table_id, sc.schema_name, t.table_name,
       EXISTS (SELECT 1 FROM ducklake_column c WHERE c.table_id = t.table_id
               GROUP BY c.column_id HAVING count(DISTINCT c.column_name) > 1) AS renamed_columns
FROM ducklake_table t
CROSS JOIN params p
LEFT JOIN ducklake_schema sc
       ON sc.schema_id = t.schema_id
      AND p.s >= sc.begin_snapshot AND (p.s < sc.end_snapshot OR sc.end_snapshot IS NULL)
WHERE p.s >= t.begin_snapshot AND (p.s < t.end_snapshot OR t.end_snapshot IS NULL)
ORDER BY sc.schema_name, t.table_name, t.table_id;
)sql";

std::string_view const views = R"sql(
-- Views visible at snapshot {SNAPSHOT}, with their SQL text (spec 30_views.sql).
WITH params AS (SELECT CAST({SNAPSHOT} AS BIGINT) AS s)
SELECT v.view_id, sc.schema_name, v.view_name, v.dialect, v.sql, v.column_aliases
FROM ducklake_view v
CROSS JOIN params p
JOIN ducklake_schema sc ON sc.schema_id = v.schema_id
WHERE p.s >= v.begin_snapshot AND (p.s < v.end_snapshot OR v.end_snapshot IS NULL)
ORDER BY sc.schema_name, v.view_name;
)sql";

std::string_view const inlined_tables = R"sql(
-- Catalog tables that can hold inlined rows: ducklake_inlined_data_<table>_<schema version>
-- and ducklake_inlined_delete_<table> (spec 40_inlined_tables.sql). Each must be empty;
-- found by name rather than through the registry, so unregistered ones count too.
SELECT table_name FROM information_schema.tables
WHERE table_catalog = current_database() AND table_schema = 'main'
  AND (starts_with(table_name, 'ducklake_inlined_data_') OR starts_with(table_name, 'ducklake_inlined_delete_'))
  AND table_name <> 'ducklake_inlined_data_tables'
ORDER BY table_name;
)sql";

} // namespace mirror::catalog::queries
