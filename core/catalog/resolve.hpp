#pragma once
// The rules that decide which files a catalog names and where they lie, in C++ on values
// read from its base tables: no SQL function a catalog could redefine takes part.

#include <cstdint>
#include <optional>
#include <string>

namespace mirror::catalog {

/// When a catalog row exists: from `begin` (the first snapshot that sees it) up to `end`
/// (the first that no longer does; none while it is current). A row without `begin` is
/// visible at no snapshot, as SQL's comparison with NULL would have it.
struct lifetime {
    std::optional<std::int64_t> begin;
    std::optional<std::int64_t> end;
    /// spec/ducklake-catalog.md, section 4: S >= begin AND (S < end OR end IS NULL).
    bool visible_at(std::uint64_t snapshot) const;
};

/// One level of a file's path (schema, table or file): its `path` and whether it is
/// relative to the level above. An absent value means "same as the parent" (section 5).
struct path_level {
    std::optional<std::string> path;
    std::optional<bool> relative;
};

struct resolved_path {
    std::string full; ///< as a reader of the origin's catalog would build it
    /// Relative to data_dir; absent when the file lies outside `data_path`.
    std::optional<std::string> relative;
};

/// Resolves a file's path (spec/ducklake-catalog.md, section 5): when every level is
/// relative, the path below data_dir is the levels joined and `data_path` plays no part;
/// otherwise the full path must start with `data_path` (non-empty) at a '/' boundary and
/// the rest is relative. Plain concatenation, as DuckLake does it; the caller then checks
/// the relative path with fdl::relative_path_problem.
resolved_path resolve_path(std::optional<std::string> const& data_path, path_level const& schema,
                           path_level const& table, std::string const& file, bool file_relative);

} // namespace mirror::catalog
