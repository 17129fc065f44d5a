#pragma once
// The events' listener (docs/events.md): `events.listen`, serving POST /hooks/REPOSITORY and
// POST /events/s3 only, with the web configuration's TLS and without its basic
// authentication (the events carry their own). Its secrets are read at start and at each
// reload; its address is taken at start.

#include "config/daemon_config.hpp"
#include "daemon/common/log.hpp"
#include "daemon/events/event_receiver.hpp"
#include "daemon/metrics/metrics.hpp"
#include "daemon/status/status_server.hpp"
#include "daemon/status/web_security.hpp"

#include <memory>
#include <optional>
#include <string>

namespace mirror::daemon {

class event_listener {
public:
    event_listener(metrics& counted, logger const& log, event_receiver::start_pass start);
    ~event_listener();

    /// Reads the secrets and binds `cfg.events.listen` (cfg.events is set). Why not, when it cannot.
    std::optional<std::string> start(net::any_io_executor executor, config::daemon_config const& cfg,
                                     std::shared_ptr<web_security> security);
    /// After a reload: the secrets and the repositories again. A listener added, removed or
    /// moved waits for the next start (logged).
    void reconfigure(config::daemon_config const& next);
    void stop();
    std::uint16_t port() const;

private:
    bool configure(config::daemon_config const& cfg);

    logger const& log_;
    event_receiver receiver_;
    std::unique_ptr<status_server> server_;
    std::optional<config::listen_address> listening_;
};

} // namespace mirror::daemon
