#pragma once
// Reading a frozen DuckLake catalog: its format, its last snapshot and the files it needs.

#include "verify/error.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace mirror::catalog {

/// A data or delete file the catalog references at its snapshot.
struct catalog_file {
    bool is_delete = false;
    std::string schema;
    std::string table;
    std::uint64_t rows = 0;  ///< record_count, or delete_count for a delete file
    std::uint64_t bytes = 0; ///< file_size_bytes
    std::string path;        ///< relative to data_dir; checked
};

struct catalog_contents {
    std::string format;      ///< ducklake_metadata 'version'
    std::string data_path;   ///< as the writer stored it (readers override it)
    std::uint64_t last_snapshot = 0;
    std::vector<catalog_file> live_files; ///< at last_snapshot, data files first
};

/// The DuckLake formats this reader knows (spec/ducklake-catalog.md, section 2).
bool is_known_format(std::string_view format) noexcept;

/// Opens `private_copy` (a copy no one else writes, with no .wal beside it) read-only
/// and reads its contents. Fails with catalog_errc: cannot_open (not DuckDB), query_failed
/// (not DuckLake), unknown_format, bad_catalog (a file outside data_dir, an unsafe path,
/// a negative size), too_large. `name` names the catalog in messages.
result<catalog_contents> read_catalog(std::filesystem::path const& private_copy, std::string const& name);

} // namespace mirror::catalog
