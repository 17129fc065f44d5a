#include "config/listen_address.hpp"

#include "config/values.hpp"

#include <algorithm>

namespace mirror::config {

namespace {

bool is_alnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

/// A host name or dotted IPv4 address: letters, digits, '.' and '-', not starting or
/// ending with a '.' or '-'.
bool is_name(std::string_view host) {
    if (host.empty() || host.size() > 253 || host.front() == '.' || host.front() == '-' || host.back() == '.' ||
        host.back() == '-')
        return false;
    return std::all_of(host.begin(), host.end(), [](char c) { return is_alnum(c) || c == '.' || c == '-'; });
}

/// An IPv6 address's shape (hex digits, ':' and '.' for an embedded IPv4 tail) with an
/// optional "%zone". The daemon's resolver checks the rest when it binds.
bool is_ipv6(std::string_view host) {
    auto zone = host.find('%');
    std::string_view address = host.substr(0, zone);
    if (zone != std::string_view::npos) {
        std::string_view name = host.substr(zone + 1);
        if (name.empty() || !std::all_of(name.begin(), name.end(),
                                         [](char c) { return is_alnum(c) || c == '-' || c == '_' || c == '.'; }))
            return false;
    }
    return address.size() >= 2 && address.find(':') != std::string_view::npos &&
           std::all_of(address.begin(), address.end(), [](char c) { return is_hex(c) || c == ':' || c == '.'; });
}

} // namespace

std::optional<listen_address> parse_listen_address(std::string_view text) {
    auto colon = text.rfind(':');
    if (colon == std::string_view::npos)
        return std::nullopt;
    std::string_view host = text.substr(0, colon);
    // Port 0 lets the system pick a free port, which the daemon logs (tests use it).
    std::string_view port_text = text.substr(colon + 1);
    auto port = port_text == "0" ? std::optional<std::uint64_t>(0) : parse_count(port_text, 65535);
    if (!port)
        return std::nullopt;
    if (host.starts_with('[')) {
        if (!host.ends_with(']'))
            return std::nullopt;
        host = host.substr(1, host.size() - 2);
        if (!is_ipv6(host))
            return std::nullopt;
    } else if (!is_name(host)) {
        return std::nullopt; // an unbracketed IPv6 address lands here too: ':' is no name character
    }
    return listen_address{std::string(host), static_cast<std::uint16_t>(*port)};
}

std::string to_string(listen_address const& address) {
    std::string host = address.host.find(':') == std::string::npos ? address.host : "[" + address.host + "]";
    return host + ":" + std::to_string(address.port);
}

} // namespace mirror::config
