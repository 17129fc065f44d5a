#pragma once
// The commands that talk to the running daemon (`trigger`, and `pause`/`resume` to make it
// look at once): a POST to its listen address over loopback.

#include "config/listen_address.hpp"
#include "verify/error.hpp"

#include <string>

namespace mirror::daemon {

inline constexpr int exit_unavailable = 69; // EX_UNAVAILABLE: no daemon answers

struct http_answer {
    unsigned status = 0;
    std::string body;
};

/// POSTs `target` (with no body) to the daemon listening on `listen`, a wildcard address
/// reached as loopback, and returns its answer; an error naming the address when nothing
/// answers within 20 s.
result<http_answer> post_to_daemon(config::listen_address const& listen, std::string target);

} // namespace mirror::daemon
