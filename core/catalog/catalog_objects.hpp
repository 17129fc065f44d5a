#pragma once
// What an attached catalog defines, checked against what the DuckLake format defines
// before a single row of it is read: a catalog is data, and must hold nothing that runs.

#include "core/catalog/duckdb_session.hpp"

#include <string>
#include <vector>

namespace mirror::catalog {

/// The rule (docs/mirroring-rules.md, "The frozen catalog"): the catalog attached to
/// `db` may define only its `main` schema and, in it, base tables named `ducklake_*`
/// whose columns compute nothing (no DEFAULT, no GENERATED), with their constraints
/// (PRIMARY KEY, NOT NULL, CHECK). Any other schema, table, view, macro, table macro,
/// type, sequence or index is foreign: DuckLake keeps its views and macros as rows.
///
/// Reads DuckDB's own catalog functions (system.main.duckdb_*()), never the catalog's
/// objects. Returns the names of the catalog's base tables, sorted. Fails, with `name` in
/// the message, with foreign_object (naming the first objects found and how many more),
/// query_failed when it is not a DuckLake catalog (a table the reader needs is missing)
/// or the functions fail, or timed_out.
result<std::vector<std::string>> check_catalog_objects(duckdb_session& db, std::string const& name);

/// The same check for several catalogs attached at once (`names[i]` names `catalogs[i]`),
/// each of DuckDB's functions listed once for all of them on `runner`'s connection: a
/// verdict per catalog. Fails as a whole (and then gives no verdict) when a listing fails,
/// for instance past `runner`'s deadline or with too many rows: check each alone then.
result<std::vector<result<std::vector<std::string>>>> check_catalog_objects(std::vector<duckdb_session*> const& catalogs,
                                                                            std::vector<std::string> const& names,
                                                                            duckdb_session& runner);

/// `table` of the attached catalog, named in full and quoted: "fdl_catalog_1"."main"."t".
std::string qualified_table(duckdb_session const& db, std::string const& table);

} // namespace mirror::catalog
