#pragma once
// The daemon's own HTTP server (Boost.Beast): GET /metrics (the Prometheus exposition),
// /status (JSON: status_report.hpp), /healthz (the process answers) and /readyz (every
// repository has completed a pass or is within its grace: docs/operations.md), and POST
// /trigger (a pass now: the on-call's control, under /status's access rules). It serves
// nothing else, reads no body and holds no connection longer than a deadline. With a web
// configuration (web_security.hpp) it speaks TLS and asks for basic authentication.

#include "config/listen_address.hpp"
#include "core/io/net.hpp"
#include "daemon/status/web_security.hpp"
#include "verify/error.hpp"

#include <boost/asio/ip/tcp.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace mirror::daemon {

/// The answer to a control request (POST /trigger): an HTTP status and a JSON body.
struct control_answer {
    unsigned status = 200;
    std::string json;
};

/// What the events' listener read of a request to an event path (daemon/events/).
struct event_request {
    std::string_view target;    ///< path and query
    std::string_view signature; ///< X-Hub-Signature-256, "" when absent
    std::string_view timestamp; ///< X-Fdl-Timestamp, "" when absent
    std::string_view body;
    bool body_too_large = false; ///< past max_event_body: not read
};

inline constexpr std::size_t max_event_body = 256 * 1024;

/// What a listener serves: the daemon's endpoints, or the events' alone.
enum class server_role {
    endpoints, ///< /metrics, /status, /healthz, /readyz, POST /trigger; basic authentication when configured
    events,    ///< POST /hooks/REPOSITORY and /events/s3 only, authenticated by the events themselves
};

/// What the server shows, asked for at each request (on the I/O thread).
struct status_sources {
    std::function<std::string()> metrics; ///< the text exposition
    /// What /readyz says: "" when ready (200), else why not (503, the text as the body).
    std::function<std::string()> not_ready;
    std::function<std::string()> status; ///< /status: JSON text
    /// POST /trigger[?repository=NAME]: a pass now of that repository (of every one without
    /// it). The name is the query's, decoded; nullopt when absent.
    std::function<awaitable<control_answer>(std::optional<std::string> repository)> trigger;
    /// An event (server_role::events only): answered at once, never waiting on a pass.
    std::function<control_answer(event_request const& request)> event;
    /// What can be refused of an event from its head alone (its path, a signature or token
    /// missing, a repository without webhooks), before its body is read: the refusal, or
    /// nullopt to read the body and ask `event`. Optional.
    std::function<std::optional<control_answer>(event_request const& head)> event_head;
};

/// How many connections a listener holds at once, in total and from one address. Past the
/// address's share, a new connection is closed unanswered; past the total, the oldest
/// connection still waiting for a request (from the address that holds the most) is closed
/// to make room, so that a flood of idle connections from many addresses cannot keep a
/// scraper out; when none waits, the new one is closed. The total is also kept to an eighth
/// of the process's descriptors, so that the passes keep theirs.
struct connection_limits {
    std::size_t total = 64;
    std::size_t per_address = 16;
};
/// The events' listener faces other hosts: fewer from one address.
inline constexpr connection_limits events_connection_limits{64, 8};

/// Whether /status answers a client at `peer`: only on this host (loopback, IPv4-mapped
/// included), whatever `listen` says, since it carries each repository's last error (hosts,
/// buckets, paths). /metrics, /healthz and /readyz answer anyone the listener reaches.
bool serves_status_to(net::ip::address const& peer);

/// Whether a control request (POST) may act: from this host (serves_status_to), naming
/// this host (names_this_host), and without an Origin header naming another (a page's form
/// on this host's browser, which no Host check stops). "" when it may, else why not.
std::string control_refusal(net::ip::address const& peer, std::string_view host, std::string_view origin,
                            bool has_origin);

/// Whether a request's Host header names this host: localhost (or a name under
/// .localhost), or a loopback address, with any port; a request without one too. /status
/// answers no other, so that a page whose name a browser resolves to 127.0.0.1 (DNS
/// rebinding) cannot read it.
bool names_this_host(std::string_view host);

class connection_table;

class status_server {
public:
    /// Binds `where` (a host name is resolved; port 0 picks a free one). Fails with the
    /// address and the system's reason (in use, permission) without starting anything.
    /// `security` (nullable: plain HTTP, no authentication) gives each connection its TLS
    /// and each request its basic authentication, before any endpoint's own rules.
    /// `limits`: connection_limits{} for the endpoints, events_connection_limits for the
    /// events (the default follows `role`).
    static result<std::unique_ptr<status_server>> bind(net::any_io_executor executor,
                                                       config::listen_address const& where,
                                                       status_sources sources,
                                                       std::shared_ptr<web_security> security = nullptr,
                                                       server_role role = server_role::endpoints,
                                                       std::optional<connection_limits> limits = std::nullopt);
    ~status_server();

    /// Starts accepting on the executor given to bind().
    void start();
    /// Stops accepting; connections in hand end at their next request or deadline.
    void stop();
    /// Connections closed unanswered because a limit was reached, or to make room for a
    /// new one, since bind().
    std::uint64_t refused_connections() const;
    /// The bound port (the chosen one when bind() asked for 0).
    std::uint16_t port() const;

private:
    status_server(net::ip::tcp::acceptor acceptor, status_sources sources, std::shared_ptr<web_security> security,
                  server_role role, connection_limits limits);
    awaitable<void> accept_loop();

    net::ip::tcp::acceptor acceptor_;
    status_sources sources_;
    std::shared_ptr<web_security> security_;
    server_role role_;
    std::shared_ptr<connection_table> connections_;
};

} // namespace mirror::daemon
