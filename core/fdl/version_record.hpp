#pragma once
// version.json: the version record, written last (spec/versions.en.md, "version.json").

#include "verify/error.hpp"
#include "verify/sha256.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mirror::fdl {

/// A file of the version that version.json pins by size and digest.
struct pinned_file {
    std::string path; ///< relative to the version's folder; checked
    std::uint64_t bytes = 0;
    verify::sha256_digest sha256{};
};

/// The `ducklake` block: which snapshot the frozen catalog holds.
struct ducklake_block {
    std::string format;
    std::uint64_t snapshot_id = 0;
    std::vector<std::uint64_t> snapshots;
};

/// What a mirror reads from version.json. Unknown fields are ignored; `extensions` is
/// read as `annotations`. A withdrawn version may lack `catalog`, `dataset` and `files`
/// (the origin may delete what it withdraws), so they are optional here and required by
/// the publish gate for a live version.
struct version_record {
    std::string id;                   ///< lower-case UUIDv7
    std::optional<std::uint64_t> seq; ///< the number shown to people
    std::vector<std::string> parents; ///< version IDs; history follows the first
    std::optional<pinned_file> catalog;
    std::optional<pinned_file> dataset;
    std::optional<pinned_file> files;
    std::optional<ducklake_block> ducklake;
    std::optional<std::string> created_at;

    /// The parent history follows, or nullopt for a root version.
    std::optional<std::string> first_parent() const;
};

/// Parses version.json. `file` names it in messages ("versions/<id>/version.json").
/// Fails with fdl_errc codes: unknown_major_version, bad_version_id (id or a parent),
/// bad_path (a pinned path), bad_value (a sha256 that is not 64 lower-case hex digits).
result<version_record> parse_version_record(std::string_view text, std::string_view file);

/// Checks the record's id against the folder it was read from.
result<void> check_record_folder(version_record const& record, std::string_view folder_id, std::string_view file);

} // namespace mirror::fdl
