#pragma once
// The URLs an HTTP store uses: a checked base (scheme, host, port, path) and the targets
// of keys below it.

#include "verify/error.hpp"

#include <string>
#include <string_view>

namespace mirror::http {

struct location {
    bool tls = true;
    std::string host; ///< without brackets for IPv6
    std::string port; ///< explicit, or the scheme's default
    std::string path; ///< percent-encoded, starts with '/'; a base ends with '/'
    std::string query; ///< percent-encoded, without '?'; empty when none

    std::string scheme() const { return tls ? "https" : "http"; }
    /// "host" or "host:port" as sent in the Host header (the port only when not default).
    std::string host_header() const;
    /// "https://host:port/path?query", for redirects and requests; never for messages,
    /// which take shown().
    std::string text() const;
    /// text() as a message shows it: the query's values masked (without_secrets).
    std::string shown() const;
    /// path and query as sent in the request line.
    std::string target() const;
};

/// `text` with what may be a secret masked, so that none written into a URL reaches a
/// log: the user information of its authority (up to the last '@' after "//") as
/// "user:***@", or "***@" for a user alone (which may be a token); each value of its
/// query as "name=***" (or "***" without a name: "?token=abc&x" shows "?token=***&***");
/// and a fragment as "#***". Every value is masked, not the ones whose names look secret:
/// a signed URL's signature goes by many names. Works on any text, URL or not
/// (tests/fuzz/url_fuzz.cpp).
std::string without_secrets(std::string_view text);

/// without_secrets(text) cut to 200 bytes, for a location quoted in a message.
std::string masked_location(std::string_view text);

/// Parses an absolute http(s) URL. Fails with store_errc::rejected for another scheme,
/// user info (credentials never sit in URLs here), a fragment, or no host.
result<location> parse_location(std::string_view url);

/// A base URL for a store: as parse_location, with the path made to end in '/' and no query.
result<location> parse_base(std::string_view url);

/// The location of `key` ('/'-separated, checked components) below `base`: each segment
/// percent-encoded.
location key_location(location const& base, std::string_view key);

/// Where a redirect's Location header points, resolved against `from`.
result<location> resolve_redirect(location const& from, std::string_view target);

} // namespace mirror::http
