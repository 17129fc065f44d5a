#pragma once
// Checks for every path and ref name that comes from a repository file. Bad input is
// refused with a reason, never "cleaned up" (spec README, "Names, paths and files").

#include <optional>
#include <string>
#include <string_view>

namespace mirror::fdl {

/// Checks a relative file path such as `main/t/ducklake-x.parquet` or `catalogs/1.0.duckdb`:
/// non-empty, valid UTF-8, no leading `/`, no URL scheme, no backslash, NUL or control
/// characters, no empty, `.` or `..` segment, no trailing `/`. Returns the reason it is
/// refused, or nullopt when it is safe to append to its folder.
std::optional<std::string> relative_path_problem(std::string_view path);

/// Checks `data_dir` from fdl.json: a relative folder that ends in `/` and passes the
/// rules of relative_path_problem for the part before that slash.
std::optional<std::string> data_dir_problem(std::string_view data_dir);

/// Checks a full ref name (`refs/heads/main`) by Git's check-ref-format rules: no `..`,
/// no control characters, space, `~ ^ : ? * [ \`, no component starting with `.` or
/// ending in `.lock`, no `@{`, not `@`, no empty component, not ending in `/` or `.`,
/// and at least two components (Git refuses one-level names by default).
/// Returns the reason it is refused, or nullopt.
std::optional<std::string> ref_name_problem(std::string_view name);

/// True for names under refs/heads/ or refs/tags/, the refs a mirror copies
/// (refs/requests/* is the origin host's own).
bool is_mirrored_ref(std::string_view name) noexcept;

/// True when `text` is valid UTF-8 (no overlong forms, no surrogates).
bool is_valid_utf8(std::string_view text) noexcept;

} // namespace mirror::fdl
