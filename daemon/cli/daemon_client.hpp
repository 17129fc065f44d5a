#pragma once
// The commands that talk to the running daemon (`trigger`, and `pause`/`resume` to make it
// look at once): a POST to its listen address over loopback, with TLS and credentials when
// its web configuration asks for them.

#include "config/daemon_config.hpp"
#include "verify/error.hpp"

#include <string>

namespace mirror::daemon {

inline constexpr int exit_unavailable = 69; // EX_UNAVAILABLE: no daemon answers

struct http_answer {
    unsigned status = 0;
    std::string body;
};

/// POSTs `target` (with no body) to the daemon of `cfg`, on its listen address (a wildcard
/// one reached as loopback), and returns its answer; an error naming the address when
/// nothing answers within 20 s. Under a web configuration it speaks TLS, trusting exactly
/// the daemon's certificate, and sends the credentials of $FDL_MIRROR_WEB_USER and
/// $FDL_MIRROR_WEB_PASSWORD, and the client certificate of $FDL_MIRROR_WEB_CLIENT_CERT and
/// $FDL_MIRROR_WEB_CLIENT_KEY; an error saying which to set when the daemon asks for them.
result<http_answer> post_to_daemon(config::daemon_config const& cfg, std::string target);

} // namespace mirror::daemon
