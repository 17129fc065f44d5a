#pragma once
// Checks of the paths and locations a configuration names, without touching them: the
// schemes each role accepts, relative paths made absolute, prefixes compared. Pure.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace mirror::config::detail {

/// A checked value, or why it was refused: a phrase that follows the quoted value in a
/// message ("is empty", "has no host").
template <class T> struct checked {
    std::optional<T> value;
    std::string why;
};

enum class location_role {
    origin,      ///< a folder path, file://, http://, https://, s3://
    mirror,      ///< a folder path, file://, s3:// (HTTP is read-only)
    store_match, ///< s3://, http://, https://: a URL prefix
};

/// `text` as a path: relative to `base`, made absolute and lexically normal. Refused when
/// empty or starting with '~' (no shell expands it here).
checked<std::filesystem::path> resolve_path(std::string_view text, std::filesystem::path const& base);

/// `text` as a location of `role`: a folder path resolved as resolve_path does, or a URL
/// kept as written once its scheme and authority are checked (a file:// URL needs an
/// absolute path; http(s) a host; s3 a bucket; none may hold user information).
checked<std::string> resolve_location(std::string_view text, location_role role, std::filesystem::path const& base);

/// `text` for a message: a URL's user information masked ("https://user:***@host/"; a
/// user alone may be a token, so "https://***@host/"); any other text as it is.
std::string shown_location(std::string_view text);

/// The scheme of a resolved location ("s3", "file", …), or empty for a folder path.
std::string_view scheme_of(std::string_view location) noexcept;

/// A resolved location in one spelling per place, for comparing two: a file:// URL as its
/// path, a trailing '/' always. Two locations overlap when one's key starts with the other's.
std::string location_key(std::string_view location);

/// Whether store prefix `match` covers `location`: a prefix that ends at a '/' boundary.
bool prefix_matches(std::string_view match, std::string_view location) noexcept;

/// An S3 endpoint, "http(s)://host[:port]" with at most a final '/'. Plain http is refused
/// unless allowed.
checked<std::string> check_endpoint(std::string_view text, bool allow_plain_http);

} // namespace mirror::config::detail
