#pragma once
// The roots an HTTPS client trusts: a CA bundle's certificates, or the system's.

#include <boost/asio/ssl/context.hpp>

#include <filesystem>
#include <optional>
#include <string>

namespace mirror::http {

/// Loads `bundle`'s PEM certificates into `tls` as its roots, or the system's when there is
/// no bundle; `ec` says why they cannot be loaded.
void load_roots(boost::asio::ssl::context& tls, std::optional<std::filesystem::path> const& bundle,
                boost::system::error_code& ec);

/// Why `bundle` cannot serve as a client's TLS roots, "" when it can: loaded as a client
/// loads it (an empty file, text without a certificate, a damaged PEM block all fail).
/// For check-config; reads the file.
std::string ca_bundle_problem(std::filesystem::path const& bundle);

} // namespace mirror::http
