#include "daemon/events/event_listener.hpp"

#include "config/event_secrets.hpp"

#include <chrono>
#include <ctime>

namespace mirror::daemon {

namespace {

std::vector<event_target> targets_of(config::daemon_config const& cfg) {
    std::vector<event_target> out;
    for (auto const& repo : cfg.repositories)
        if (repo.events.any())
            out.push_back({repo.name, repo.events, s3_origin_of(repo.name, repo.origin)});
    return out;
}

} // namespace

event_listener::event_listener(metrics& counted, logger const& log, event_receiver::start_pass start)
    : log_(log), receiver_(counted, log, std::move(start), static_cast<std::int64_t>(std::time(nullptr))) {}

event_listener::~event_listener() = default;

bool event_listener::configure(config::daemon_config const& cfg) {
    auto secrets = config::load_event_secrets(cfg.events->secrets_file);
    if (!secrets) { // checked with the configuration a moment ago: changed since
        for (auto const& problem : secrets.error())
            log_.error({}, "events: secrets_file: not taken: " + problem.text());
        return false;
    }
    receiver_.configure(std::move(*secrets),
                        std::chrono::duration_cast<std::chrono::seconds>(cfg.events->timestamp_window), targets_of(cfg));
    return true;
}

std::optional<std::string> event_listener::start(net::any_io_executor executor, config::daemon_config const& cfg,
                                                 std::shared_ptr<web_security> security) {
    if (!configure(cfg))
        return "events: the secrets file does not load";
    status_sources sources;
    sources.event = [this](event_request const& request) {
        return receiver_.handle(request, static_cast<std::int64_t>(std::time(nullptr)));
    };
    sources.event_head = [this](event_request const& head) {
        return receiver_.check_head(head, static_cast<std::int64_t>(std::time(nullptr)));
    };
    auto bound = status_server::bind(std::move(executor), cfg.events->listen, std::move(sources), std::move(security),
                                     server_role::events);
    if (!bound)
        return "events: " + bound.error().message;
    server_ = std::move(*bound);
    server_->start();
    listening_ = cfg.events->listen;
    log_.info({}, "events: listening on " + cfg.events->listen.host + ":" + std::to_string(server_->port()) +
                      " (POST /hooks/REPOSITORY, POST /events/s3)");
    return std::nullopt;
}

void event_listener::reconfigure(config::daemon_config const& next) {
    bool const same_address = next.events && listening_ && config::to_string(next.events->listen) == config::to_string(*listening_);
    if (!same_address && (next.events || listening_))
        log_.warning({}, "events: a listener added, removed or moved takes effect at the next start");
    if (next.events && listening_)
        configure(next); // the old secrets stay when the new ones do not load (logged)
}

void event_listener::stop() {
    if (server_)
        server_->stop();
}

std::uint16_t event_listener::port() const { return server_ ? server_->port() : 0; }

} // namespace mirror::daemon
