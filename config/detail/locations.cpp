#include "config/detail/locations.hpp"

#include "config/values.hpp"

#include <algorithm>
#include <system_error>

namespace mirror::config::detail {

namespace {

/// The authority of `rest` (what follows "scheme://"): up to the first '/', '?' or '#'.
std::string_view authority_of(std::string_view rest) noexcept { return rest.substr(0, rest.find_first_of("/?#")); }

bool has_blank(std::string_view text) noexcept {
    return std::any_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) <= 0x20; });
}

} // namespace

checked<std::filesystem::path> resolve_path(std::string_view text, std::filesystem::path const& base) {
    if (text.empty())
        return {std::nullopt, "is empty"};
    if (text.starts_with('~'))
        return {std::nullopt, "starts with '~', which is not expanded: write the full path"};
    std::filesystem::path path{std::string(text)};
    if (path.is_relative())
        path = base / path;
    return {path.lexically_normal(), {}};
}

checked<std::string> resolve_location(std::string_view text, location_role role, std::filesystem::path const& base) {
    std::string_view const accepted = role == location_role::origin
                                          ? "a folder path or a file://, http://, https:// or "
                                            "s3:// URL"
                                      : role == location_role::mirror ? "a folder path or a file:// or s3:// URL"
                                                                      : "an s3://, http:// or https:// URL prefix";
    if (text.empty())
        return {std::nullopt, "is empty"};
    if (has_blank(text))
        return {std::nullopt, "holds a space or a control character"};
    auto const scheme_end = text.find("://");
    if (scheme_end == std::string_view::npos) {
        if (role == location_role::store_match)
            return {std::nullopt, "is not " + std::string(accepted)};
        auto path = resolve_path(text, base);
        if (!path.value)
            return {std::nullopt, std::move(path.why)};
        return {path.value->string(), {}};
    }
    std::string_view const scheme = text.substr(0, scheme_end);
    std::string_view const rest = text.substr(scheme_end + 3);
    bool const known = scheme == "s3" || scheme == "http" || scheme == "https" || scheme == "file";
    if (!known || (scheme == "file" && role == location_role::store_match))
        return {std::nullopt,
                "has the scheme '" + std::string(scheme).substr(0, 16) + "': it must be " + std::string(accepted)};
    if ((scheme == "http" || scheme == "https") && role == location_role::mirror)
        return {std::nullopt, "is read-only (HTTP): a mirror is " + std::string(accepted)};
    if (scheme == "file") {
        if (!rest.starts_with('/'))
            return {std::nullopt, "needs an absolute path (file:///…)"};
        return {std::string(text), {}};
    }
    if (authority_of(rest).empty())
        return {std::nullopt, scheme == "s3" ? "has no bucket (s3://bucket/prefix/)" : "has no host"};
    if (authority_of(rest).find('@') != std::string_view::npos)
        return {std::nullopt, "holds user information: credentials never go in URLs (S3 keys go in a store's "
                              "credentials_file or the environment)"};
    return {std::string(text), {}};
}

std::string shown_location(std::string_view text) {
    auto const scheme_end = text.find("://");
    if (scheme_end == std::string_view::npos)
        return std::string(text);
    std::string_view const authority = authority_of(text.substr(scheme_end + 3));
    auto const at = authority.rfind('@');
    if (at == std::string_view::npos)
        return std::string(text);
    std::string_view const userinfo = authority.substr(0, at);
    auto const colon = userinfo.find(':');
    std::string masked = colon == std::string_view::npos ? "***" : std::string(userinfo.substr(0, colon)) + ":***";
    return std::string(text.substr(0, scheme_end + 3)) + masked + std::string(text.substr(scheme_end + 3 + at));
}

std::string_view scheme_of(std::string_view location) noexcept {
    auto const end = location.find("://");
    return end == std::string_view::npos ? std::string_view() : location.substr(0, end);
}

std::string location_key(std::string_view location) {
    std::string key;
    if (scheme_of(location).empty() || scheme_of(location) == "file") {
        std::string_view const path = scheme_of(location).empty() ? location : location.substr(7);
        key = std::filesystem::path(std::string(path)).lexically_normal().string();
    } else {
        key = location;
    }
    if (!key.ends_with('/'))
        key += '/';
    return key;
}

bool prefix_matches(std::string_view match, std::string_view location) noexcept {
    if (match.empty() || !location.starts_with(match))
        return false;
    return match.ends_with('/') || location.size() == match.size() || location[match.size()] == '/';
}

checked<std::string> check_endpoint(std::string_view text, bool allow_plain_http) {
    if (text.empty())
        return {std::nullopt, "is empty"};
    auto const scheme_end = text.find("://");
    std::string_view const scheme = scheme_end == std::string_view::npos ? "" : text.substr(0, scheme_end);
    if (scheme != "http" && scheme != "https")
        return {std::nullopt, "is not an http:// or https:// URL (https://host[:port])"};
    std::string_view rest = text.substr(scheme_end + 3);
    if (rest.ends_with('/'))
        rest.remove_suffix(1);
    if (authority_of(rest).find('@') != std::string_view::npos)
        return {std::nullopt, "holds user information: credentials never go in URLs (use credentials_file or the "
                              "environment)"};
    if (rest.empty() || rest.find_first_of("/?#@") != std::string_view::npos || has_blank(rest))
        return {std::nullopt, "is not scheme://host[:port], with nothing after the port"};
    // A port after the last ':', unless that ':' is inside an IPv6 literal's brackets.
    auto const colon = rest.rfind(':');
    if (colon != std::string_view::npos && rest.find(']', colon) == std::string_view::npos) {
        if (colon == 0 || !parse_count(rest.substr(colon + 1), 65535))
            return {std::nullopt, "has no host, or a port outside 1..65535"};
    }
    if (scheme == "http" && !allow_plain_http)
        return {std::nullopt, "is plain http: set allow_plain_http: true to send requests unencrypted"};
    return {std::string(text), {}};
}

} // namespace mirror::config::detail
