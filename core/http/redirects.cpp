#include "core/http/redirects.hpp"

#include <algorithm>
#include <cctype>

namespace mirror::http {

namespace {

bool internal_v4(boost::asio::ip::address_v4 const& a) noexcept {
    auto const b = a.to_bytes();
    return b[0] == 0 || b[0] == 10 || b[0] == 127 ||              // "this network", private, loopback
           (b[0] == 100 && (b[1] & 0xc0) == 64) ||                // shared address space (carrier NAT)
           (b[0] == 169 && b[1] == 254) ||                        // link-local: cloud metadata
           (b[0] == 172 && (b[1] & 0xf0) == 16) ||                // private
           (b[0] == 192 && b[1] == 168) ||                        // private
           b[0] >= 224;                                           // multicast, reserved, broadcast
}

std::string lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    return text;
}

/// "host" matches any port of the scheme; "host:port" one port; "[v6]:port" for IPv6.
bool allowed(location const& next, std::vector<std::string> const& hosts) {
    std::string const host = lower(next.host);
    std::string const shown = host.find(':') != std::string::npos ? "[" + host + "]" : host;
    for (auto const& entry : hosts) {
        std::string const e = lower(entry);
        if (e == host || e == shown || e == shown + ":" + next.port)
            return true;
    }
    return false;
}

} // namespace

bool is_internal_address(boost::asio::ip::address const& address) noexcept {
    if (address.is_v4())
        return internal_v4(address.to_v4());
    auto const v6 = address.to_v6();
    if (v6.is_v4_mapped())
        return internal_v4(boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, v6));
    auto const b = v6.to_bytes();
    auto v4_at = [&](std::size_t at, unsigned char flip = 0) {
        return boost::asio::ip::address_v4({static_cast<unsigned char>(b[at] ^ flip),
                                            static_cast<unsigned char>(b[at + 1] ^ flip),
                                            static_cast<unsigned char>(b[at + 2] ^ flip),
                                            static_cast<unsigned char>(b[at + 3] ^ flip)});
    };
    auto zero = [&](std::size_t from, std::size_t to) {
        return std::all_of(b.begin() + from, b.begin() + to, [](unsigned char c) { return c == 0; });
    };
    // Addresses that carry an IPv4 address inside: a gateway would take the client there.
    if (zero(0, 12)) // IPv4-compatible ::a.b.c.d (deprecated; and :: and ::1 themselves)
        return v6.is_loopback() || v6.is_unspecified() || internal_v4(v4_at(12));
    if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b) {
        if (zero(4, 12)) // NAT64, well-known prefix 64:ff9b::/96
            return internal_v4(v4_at(12));
        if (b[4] == 0x00 && b[5] == 0x01) // 64:ff9b:1::/48, local-use NAT64: a private network's own
            return true;
    }
    if (b[0] == 0x20 && b[1] == 0x02) // 6to4, 2002:a.b.c.d::/48
        return internal_v4(v4_at(2));
    if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x00 && b[3] == 0x00) // Teredo: server, and client flipped
        return internal_v4(v4_at(4)) || internal_v4(v4_at(12, 0xff));
    return v6.is_loopback() || v6.is_unspecified() || v6.is_link_local() || v6.is_multicast() ||
           (b[0] & 0xfe) == 0xfc ||             // unique local (fc00::/7)
           (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0); // site-local (fec0::/10, deprecated)
}

redirect_verdict decide_redirect(location const& start, bool start_internal, location const& next,
                                 std::vector<std::string> const& allowed_hosts) {
    redirect_verdict out;
    std::string const from = start.shown(), to = next.shown();
    if (start.tls && !next.tls) {
        out.why = from + ": a redirect from https to http (" + to + ") is refused";
        return out;
    }
    if (next.tls == start.tls && lower(next.host) == lower(start.host) && next.port == start.port) {
        out.follow = true;
        return out;
    }
    if (allowed(next, allowed_hosts)) {
        out.follow = true;
        out.public_addresses_only = !start_internal;
        return out;
    }
    out.why = from + ": a redirect to another host or port (" + to +
              ") is refused; allow its host for this origin (redirect_hosts, --allow-redirect-to) to follow it";
    return out;
}

} // namespace mirror::http
