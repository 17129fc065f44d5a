#pragma once
// The address the daemon serves its metrics and health endpoints on: "host:port".

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mirror::config {

/// A host and a TCP port to listen on. Nothing is resolved here: the host is checked for
/// its characters only, and the daemon resolves and binds it at start.
struct listen_address {
    std::string host;       ///< a name or IPv4 address, or an IPv6 address without its brackets
    std::uint16_t port = 0; ///< 0..65535; 0: any free port
};

/// "127.0.0.1:9464", "localhost:9464", "0.0.0.0:9464", "[::1]:9464", "[::]:9464",
/// "[fe80::1%eth0]:9464". An IPv6 address must be in brackets. nullopt for a missing
/// host or port, a port outside 0..65535, a name with characters other than letters,
/// digits, '.' and '-', and bracket contents that are not IPv6-shaped.
std::optional<listen_address> parse_listen_address(std::string_view text);

/// The form parse_listen_address reads: IPv6 hosts in brackets.
std::string to_string(listen_address const& address);

} // namespace mirror::config
