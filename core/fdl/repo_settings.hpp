#pragma once
// fdl.json: the repository's settings (spec/layout.en.txt, "fdl.json").

#include "verify/error.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mirror::fdl {

/// The FDL major versions this build reads.
inline constexpr int known_major_version = 0;

/// One entry of `catalog_formats`.
struct catalog_format {
    std::string ducklake;             ///< the DuckLake format, e.g. "1.0"
    std::optional<std::string> until; ///< last day it is written for new versions
};

/// What a mirror needs from fdl.json. Unknown fields are ignored (and preserved, since
/// the file is copied byte for byte).
struct repo_settings {
    std::string fdl;                ///< the spec version as written, e.g. "0.1"
    std::optional<std::string> id;  ///< the repository's identity; absent in old repositories
    std::string data_dir = "data/"; ///< checked: relative, ends in '/'
    std::vector<std::string> signers;
    std::vector<catalog_format> catalog_formats;
};

/// Parses fdl.json. Fails with fdl_errc::unknown_major_version when `fdl` names a major
/// version other than known_major_version, with bad_path for an unsafe `data_dir`, and
/// with the other fdl_errc codes for malformed content; the message names the field.
result<repo_settings> parse_repo_settings(std::string_view text);

/// The major version of a spec version string ("0.1" -> 0); nullopt when malformed.
std::optional<int> major_version_of(std::string_view version) noexcept;

} // namespace mirror::fdl
