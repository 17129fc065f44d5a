#pragma once
// Holding a catalog to what the version says of it: version.json's ducklake block,
// files.json, and the same version's catalogs in other formats. Pure; no I/O.

#include "core/catalog/catalog_reader.hpp"
#include "core/fdl/files_index.hpp"
#include "core/fdl/version_record.hpp"

#include <string>
#include <vector>

namespace mirror::catalog {

/// The last snapshot must be ducklake.snapshot_id and the format ducklake.format
/// (catalog_errc::snapshot_mismatch, format_mismatch). `name` is the catalog's key.
std::vector<error> check_against_record(catalog_contents const& catalog, fdl::ducklake_block const& block,
                                        std::string const& name);

/// Every way `index` (files.json, named `index_name`) differs from the catalog: tables,
/// paths, order, rows, bytes, footer_bytes, deletes, renamed_columns. Each is
/// catalog_errc::index_disagrees; the catalog is right. At most `limit` are listed, the
/// last one saying how many more there were.
std::vector<error> compare_with_index(catalog_contents const& catalog, fdl::files_index const& index,
                                      std::string const& index_name, std::size_t limit = 20);

/// A catalog in another format (catalogs/<format>.duckdb, named `other_name`, in the
/// format its name declares) must be in that format and reference the same data and
/// delete files, with the same sizes, as the version's catalog (catalog_errc::
/// format_mismatch, catalogs_disagree).
std::vector<error> compare_catalogs(catalog_contents const& catalog, catalog_contents const& other,
                                    std::string const& declared_format, std::string const& other_name,
                                    std::size_t limit = 20);

} // namespace mirror::catalog
