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
-- Last snapshot (the one the daemon mirrors by default) and how many snapshots are retained.
SELECT max(snapshot_id) AS last_snapshot, count(*) AS retained_snapshots
FROM ducklake_snapshot;
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
           f.path, f.path_is_relative, f.file_format AS format, f.record_count AS row_count, f.file_size_bytes
    FROM ducklake_data_file f, params p
    WHERE p.s >= f.begin_snapshot AND (p.s < f.end_snapshot OR f.end_snapshot IS NULL)
    UNION ALL
    SELECT 'delete', d.delete_file_id, d.data_file_id, d.table_id,
           d.path, d.path_is_relative, d.format, d.delete_count, d.file_size_bytes
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
SELECT kind, file_id, data_file_id, schema_name, table_name, format, row_count, file_size_bytes,
       CASE WHEN all_relative THEN relative_chain
            WHEN starts_with(full_path, data_path) THEN substr(full_path, length(data_path) + 1)
       END AS rel_path,          -- NULL => file lies outside data_path: refuse to mirror
       full_path
FROM resolved
ORDER BY kind, file_id;
)sql";

} // namespace mirror::catalog::queries
