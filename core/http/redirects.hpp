#pragma once
// Where an origin's redirects may lead. An origin is hostile until proven otherwise, and the
// daemon often runs inside a network the origin cannot reach: a redirect must not turn it
// into a way in (cloud metadata, admin consoles on private addresses).

#include "core/http/url.hpp"

#include <boost/asio/ip/address.hpp>

#include <string>
#include <vector>

namespace mirror::http {

/// True for an address a public origin has no business sending the client to: loopback,
/// unspecified, link-local (169.254/16 and fe80::/10, where cloud metadata lives), private
/// (10/8, 172.16/12, 192.168/16, fc00::/7), shared (100.64/10), multicast, broadcast and
/// 0/8, site-local fec0::/10 and local-use NAT64 64:ff9b:1::/48; an IPv6 address that
/// carries an IPv4 one (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64 64:ff9b::/96,
/// 6to4 2002::/16, Teredo 2001::/32) by that IPv4 part.
bool is_internal_address(boost::asio::ip::address const& address) noexcept;

/// What to do with one redirect.
struct redirect_verdict {
    bool follow = false;
    /// Connect only to public addresses (see is_internal_address) of the target.
    bool public_addresses_only = false;
    std::string why; ///< when not followed: the reason, naming both locations
};

/// The redirect policy (docs/mirroring-rules.md, "HTTP origins"). `start` is where the
/// request was first sent (inside the configured origin), `start_internal` whether the
/// origin answered from an internal address, `next` where the redirect points and
/// `allowed_hosts` the hosts ("host" or "host:port") configured for this origin.
/// - never from https to http;
/// - to the same scheme, host and port as `start`: followed;
/// - to an allowed host: followed, and, unless the origin itself is internal, only to
///   its public addresses;
/// - anywhere else: refused.
redirect_verdict decide_redirect(location const& start, bool start_internal, location const& next,
                                 std::vector<std::string> const& allowed_hosts);

} // namespace mirror::http
