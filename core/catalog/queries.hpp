#pragma once
// The DuckLake metadata queries (spec/ducklake-catalog.md, section 7).

#include <string_view>

namespace mirror::catalog::queries {

/// Global settings: key, value for version, data_path, created_by, encrypted.
extern std::string_view const metadata;
/// last_snapshot, retained_snapshots.
extern std::string_view const snapshots;
/// Data and delete files visible at {SNAPSHOT}, with rel_path (NULL outside data_path).
extern std::string_view const live_files;

} // namespace mirror::catalog::queries
