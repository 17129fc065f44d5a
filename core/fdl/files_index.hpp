#pragma once
// files.json: the per-table index of a version's data files (spec/versions.en.md).

#include "core/fdl/json_limits.hpp"
#include "verify/error.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mirror::fdl {

/// A delete file attached to a data file.
struct delete_file_entry {
    std::string path; ///< relative to data_dir; checked
    std::uint64_t rows = 0;
    std::uint64_t bytes = 0;
};

/// One data file as files.json lists it.
struct data_file_entry {
    std::string path; ///< relative to data_dir; checked
    std::uint64_t rows = 0;
    std::uint64_t bytes = 0;
    std::optional<std::uint64_t> footer_bytes;
    std::optional<delete_file_entry> deletes;
};

struct table_entry {
    std::string name; ///< "schema.table"
    bool renamed_columns = false;
    std::vector<data_file_entry> files; ///< in the catalog's order
};

struct files_index {
    std::vector<table_entry> tables; ///< in the file's order
};

/// Parses files.json. `file` names it in messages. Every path must pass
/// relative_path_problem (it is appended to data_dir); `bytes` and `rows` are required.
/// Its JSON tree may take `max_tree_bytes` (fdl_errc::too_large past it); the index made
/// from it takes less (memory_bytes), and the tree is gone when this returns.
result<files_index> parse_files_index(std::string_view text, std::string_view file,
                                      std::size_t max_tree_bytes = default_max_tree_bytes);

/// What an index takes in memory, near enough to charge it to a budget.
std::uint64_t memory_bytes(files_index const& index);

/// A file a version needs under data_dir, with the size the index records.
struct needed_data_file {
    std::string path; ///< relative to data_dir
    std::uint64_t bytes = 0;
};

/// What a list of needed files takes in memory, near enough to charge it to a budget.
std::uint64_t memory_bytes(std::vector<needed_data_file> const& files);

/// Every data and delete file the index names, each once (first size wins; a second
/// entry for the same path with another size is reported as an error).
result<std::vector<needed_data_file>> needed_files(files_index const& index, std::string_view file);

} // namespace mirror::fdl
