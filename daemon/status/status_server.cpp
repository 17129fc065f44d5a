#include "daemon/status/status_server.hpp"

#include "core/io/errors.hpp"
#include "core/io/text.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/url/parse.hpp>

#include <chrono>
#include <exception>

namespace mirror::daemon {

namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = net::ip::tcp;

namespace {

constexpr auto request_deadline = std::chrono::seconds(10); // a scraper is quick; a stalled peer is cut
constexpr unsigned max_requests_per_connection = 100;

bhttp::response<bhttp::string_body> answer(bhttp::request<bhttp::empty_body> const& request,
                                           status_sources const& sources, bool status_allowed) {
    bhttp::response<bhttp::string_body> out;
    out.version(request.version());
    out.keep_alive(request.keep_alive());
    out.set(bhttp::field::server, "fdl-mirror");
    out.set(bhttp::field::content_type, "text/plain; charset=utf-8");
    auto target = request.target();
    if (auto query = target.find('?'); query != beast::string_view::npos)
        target = target.substr(0, query);
    if (target == "/trigger") { // a POST is answered by answer_control
        out.result(bhttp::status::method_not_allowed);
        out.set(bhttp::field::allow, "POST");
        out.body() = "/trigger takes POST only\n";
    } else if (request.method() != bhttp::verb::get && request.method() != bhttp::verb::head) {
        out.result(bhttp::status::method_not_allowed);
        out.set(bhttp::field::allow, "GET, HEAD");
        out.body() = "only GET and HEAD\n";
    } else if (target == "/metrics") {
        out.result(bhttp::status::ok);
        out.set(bhttp::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
        out.body() = sources.metrics ? sources.metrics() : std::string();
    } else if (target == "/healthz") {
        out.result(bhttp::status::ok);
        out.body() = "ok\n";
    } else if (target == "/status" && !status_allowed) {
        out.result(bhttp::status::forbidden);
        out.body() = "fdl-mirror serves /status to clients on this host only\n";
    } else if (target == "/status" && !names_this_host(request[bhttp::field::host])) {
        // A page of another site that a browser on this host resolves to 127.0.0.1 (DNS
        // rebinding) still sends its own name: it must not read the last errors.
        out.result(bhttp::status::forbidden);
        out.body() = "fdl-mirror serves /status to Host: localhost or a loopback address only\n";
    } else if (target == "/status") {
        out.result(bhttp::status::ok);
        out.set(bhttp::field::content_type, "application/json");
        out.body() = sources.status ? sources.status() : std::string("{}\n");
    } else if (target == "/readyz") {
        std::string why = sources.not_ready ? sources.not_ready() : std::string("no readiness source");
        out.result(why.empty() ? bhttp::status::ok : bhttp::status::service_unavailable);
        out.body() = why.empty() ? "ready\n" : "not ready: " + why + "\n";
    } else {
        out.result(bhttp::status::not_found);
        out.body() = "fdl-mirror serves /metrics, /status, /healthz, /readyz and POST /trigger\n";
    }
    out.prepare_payload();
    if (request.method() == bhttp::verb::head)
        out.body().clear(); // Content-Length stays that of the GET
    return out;
}

bool is_control(bhttp::request<bhttp::empty_body> const& request) {
    auto target = request.target();
    return request.method() == bhttp::verb::post && target.substr(0, target.find('?')) == "/trigger";
}

/// The value of `name` in the request's query, percent-decoded; nullopt when absent or the
/// target does not parse.
std::optional<std::string> query_value(beast::string_view target, std::string_view name) {
    auto parsed = boost::urls::parse_origin_form(std::string_view(target.data(), target.size()));
    if (!parsed)
        return std::nullopt;
    auto params = parsed->params();
    auto found = params.find(name);
    if (found == params.end() || !(*found).has_value)
        return std::nullopt;
    return std::string((*found).value);
}

awaitable<bhttp::response<bhttp::string_body>> answer_control(bhttp::request<bhttp::empty_body> const& request,
                                                              status_sources const& sources,
                                                              net::ip::address const& peer) {
    bhttp::response<bhttp::string_body> out;
    out.version(request.version());
    out.keep_alive(request.keep_alive());
    out.set(bhttp::field::server, "fdl-mirror");
    out.set(bhttp::field::content_type, "text/plain; charset=utf-8");
    auto const origin = request.find(bhttp::field::origin);
    auto refusal = control_refusal(peer, request[bhttp::field::host],
                                   origin == request.end() ? std::string_view() : std::string_view(origin->value()),
                                   origin != request.end());
    if (!refusal.empty()) {
        out.result(bhttp::status::forbidden);
        out.body() = refusal + "\n";
    } else if (!sources.trigger) {
        out.result(bhttp::status::service_unavailable);
        out.body() = "no trigger here\n";
    } else {
        auto answered = co_await sources.trigger(query_value(request.target(), "repository"));
        out.result(static_cast<bhttp::status>(answered.status));
        out.set(bhttp::field::content_type, "application/json");
        out.body() = std::move(answered.json);
    }
    out.prepare_payload();
    co_return out;
}

bhttp::response<bhttp::string_body> unauthorized(bhttp::request<bhttp::empty_body> const& request) {
    bhttp::response<bhttp::string_body> out{bhttp::status::unauthorized, request.version()};
    out.keep_alive(request.keep_alive());
    out.set(bhttp::field::server, "fdl-mirror");
    out.set(bhttp::field::content_type, "text/plain; charset=utf-8");
    out.set(bhttp::field::www_authenticate, "Basic realm=\"fdl-mirror\", charset=\"UTF-8\"");
    out.body() = "fdl-mirror: this endpoint needs basic authentication (basic_auth_users of the web configuration)\n";
    out.prepare_payload();
    return out;
}

/// Sends the answer to the `served`th request of a connection, with the web configuration's
/// headers; false when the connection ends after it (closed, or its share of requests made).
template <class Stream>
awaitable<bool> send_answer(Stream& stream, bhttp::response<bhttp::string_body>& out, unsigned served,
                            std::shared_ptr<web_settings const> const& settings) {
    if (settings != nullptr)
        for (auto const& [name, value] : settings->config.headers)
            out.set(name, value);
    if (served + 1 == max_requests_per_connection)
        out.keep_alive(false); // said, so that the client does not send one more into a closing socket
    bool const keep = out.keep_alive();
    beast::get_lowest_layer(stream).expires_after(request_deadline);
    auto [write_ec, written] = co_await bhttp::async_write(stream, out, use_op);
    co_return !write_ec && keep;
}

/// Answers the requests of one connection, plain or TLS, until it closes, stalls or has
/// made its share of requests.
template <class Stream>
awaitable<void> serve_requests(Stream& stream, status_sources const& sources, net::ip::address const& peer,
                               bool status_allowed, web_security* security,
                               std::shared_ptr<web_settings const> const& settings) {
    beast::flat_buffer buffer;
    for (unsigned served = 0; served < max_requests_per_connection; ++served) {
        bhttp::request_parser<bhttp::empty_body> parser;
        parser.header_limit(8 * 1024);
        beast::get_lowest_layer(stream).expires_after(request_deadline);
        auto [read_ec, n] = co_await bhttp::async_read(stream, buffer, parser, use_op);
        if (read_ec)
            co_return; // closed, timed out, or not HTTP: nothing to answer
        // A web configuration changed since this connection began: end it unanswered, so
        // that the client connects again under the new one (an HTTP client retries a GET on
        // a reused connection closed this way). Every request after a change meets it.
        if (security != nullptr && security->current() != settings)
            co_return;
        auto const& request = parser.get();
        bhttp::response<bhttp::string_body> out;
        auto allowed = auth_result::allowed;
        if (security != nullptr && settings != nullptr) {
            auto const header = request[bhttp::field::authorization];
            allowed = co_await security->authorize(*settings, std::string_view(header.data(), header.size()));
        }
        if (allowed == auth_result::refused)
            out = unauthorized(request);
        else if (is_control(request)) // (not a ?: around co_await: GCC 12, docs/development.md)
            out = co_await answer_control(request, sources, peer);
        else
            out = answer(request, sources, status_allowed);
        bool const go_on = co_await send_answer(stream, out, served, settings);
        if (!go_on)
            break;
    }
}

/// Answers the event requests of one connection: a POST to an event path, its body read up
/// to max_event_body; no basic authentication (the events carry their own).
template <class Stream>
awaitable<void> serve_events(Stream& stream, status_sources const& sources, web_security* security,
                             std::shared_ptr<web_settings const> const& settings) {
    beast::flat_buffer buffer;
    for (unsigned served = 0; served < max_requests_per_connection; ++served) {
        bhttp::request_parser<bhttp::string_body> parser;
        parser.header_limit(8 * 1024);
        parser.body_limit(max_event_body);
        beast::get_lowest_layer(stream).expires_after(request_deadline);
        auto [read_ec, n] = co_await bhttp::async_read(stream, buffer, parser, use_op);
        bool const too_large = read_ec == bhttp::error::body_limit;
        if (read_ec && !too_large)
            co_return;
        if (security != nullptr && security->current() != settings)
            co_return;
        auto const& request = parser.get();
        bhttp::response<bhttp::string_body> out;
        out.version(request.version());
        out.keep_alive(request.keep_alive() && !too_large); // an unread body: the connection cannot go on
        out.set(bhttp::field::server, "fdl-mirror");
        out.set(bhttp::field::content_type, "application/json");
        if (request.method() != bhttp::verb::post) {
            out.result(bhttp::status::method_not_allowed);
            out.set(bhttp::field::allow, "POST");
            out.body() = "{\"error\":\"the event paths take POST only\"}\n";
        } else if (!sources.event) {
            out.result(bhttp::status::service_unavailable);
            out.body() = "{\"error\":\"no events here\"}\n";
        } else {
            auto header = [&](std::string_view name) {
                auto found = request.find(beast::string_view(name.data(), name.size()));
                return found == request.end() ? std::string_view() : std::string_view(found->value());
            };
            event_request event{std::string_view(request.target()), header("X-Hub-Signature-256"),
                                header("X-Fdl-Timestamp"),
                                too_large ? std::string_view() : std::string_view(request.body()), too_large};
            auto answered = sources.event(event);
            out.result(static_cast<bhttp::status>(answered.status));
            out.body() = std::move(answered.json);
        }
        out.prepare_payload();
        bool const go_on = co_await send_answer(stream, out, served, settings);
        if (!go_on)
            break;
    }
}

/// The requests of one connection, as the listener's role serves them.
template <class Stream>
awaitable<void> serve_connection(Stream& stream, status_sources const& sources, net::ip::address const& peer,
                                 bool status_allowed, web_security* security,
                                 std::shared_ptr<web_settings const> const& settings, server_role role) {
    if (role == server_role::events)
        co_await serve_events(stream, sources, security, settings);
    else
        co_await serve_requests(stream, sources, peer, status_allowed, security, settings);
}

awaitable<void> serve(tcp::socket socket, status_sources sources, std::shared_ptr<web_security> security,
                      server_role role) {
    boost::system::error_code peer_ec;
    auto const peer = socket.remote_endpoint(peer_ec);
    bool const status_allowed = !peer_ec && serves_status_to(peer.address());
    auto const settings = security ? security->current() : nullptr;
    if (settings == nullptr || settings->tls == nullptr) {
        beast::tcp_stream stream(std::move(socket));
        co_await serve_connection(stream, sources, peer.address(), status_allowed, security.get(), settings, role);
        beast::error_code ignored;
        stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
        co_return;
    }
    beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(socket)), *settings->tls);
    beast::get_lowest_layer(stream).expires_after(request_deadline);
    auto [handshake_ec] = co_await stream.async_handshake(net::ssl::stream_base::server, use_op);
    if (handshake_ec)
        co_return; // plain HTTP, an unknown CA, no client certificate where one is required
    if (!peer_has_allowed_san(stream.native_handle(), settings->config.tls->client_allowed_sans))
        co_return; // as exporter-toolkit: the connection ends, no answer
    co_await serve_connection(stream, sources, peer.address(), status_allowed, security.get(), settings, role);
    beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(2));
    auto [shutdown_ec] = co_await stream.async_shutdown(use_op);
    (void)shutdown_ec; // a peer that closed first is not a problem
}

void rethrow_bug(std::exception_ptr bug) {
    if (bug)
        std::rethrow_exception(bug);
}

} // namespace

bool names_this_host(std::string_view host) {
    if (host.empty())
        return true; // HTTP/1.0 without Host: no browser sends that
    std::string name(host);
    if (name.starts_with('[')) { // [v6]:port
        auto close = name.find(']');
        if (close == std::string::npos)
            return false;
        name = name.substr(1, close - 1);
    } else if (auto colon = name.find(':'); colon != std::string::npos && name.find(':', colon + 1) == std::string::npos) {
        name = name.substr(0, colon);
    }
    for (char& c : name)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (name.ends_with('.'))
        name.pop_back();
    if (name == "localhost" || name.ends_with(".localhost"))
        return true;
    boost::system::error_code ec;
    auto address = net::ip::make_address(name, ec);
    return !ec && serves_status_to(address);
}

std::string control_refusal(net::ip::address const& peer, std::string_view host, std::string_view origin,
                            bool has_origin) {
    if (!serves_status_to(peer))
        return "fdl-mirror takes control requests from clients on this host only";
    if (!names_this_host(host))
        return "fdl-mirror takes control requests for Host: localhost or a loopback address only";
    if (has_origin) {
        // A browser's cross-site POST carries the page's origin ("http://evil.example",
        // "null"): only a page of this host itself may act.
        std::string_view rest = origin;
        for (std::string_view scheme : {"http://", "https://"})
            if (rest.starts_with(scheme))
                rest.remove_prefix(scheme.size());
        if (rest.size() == origin.size() || rest.empty() || !names_this_host(rest))
            return "fdl-mirror takes no control request from a page of another site (Origin: " +
                   std::string(io::utf8_prefix(origin, 100)) + ")";
    }
    return {};
}

bool serves_status_to(net::ip::address const& peer) {
    if (peer.is_v6() && peer.to_v6().is_v4_mapped())
        return net::ip::make_address_v4(net::ip::v4_mapped, peer.to_v6()).is_loopback();
    return peer.is_loopback();
}

result<std::unique_ptr<status_server>> status_server::bind(net::any_io_executor executor,
                                                           config::listen_address const& where,
                                                           status_sources sources,
                                                           std::shared_ptr<web_security> security,
                                                           server_role role) {
    auto fail = [&](std::string const& why) {
        return make_error(io::store_errc::rejected, "listen " + config::to_string(where) + ": " + why);
    };
    boost::system::error_code ec;
    tcp::resolver resolver(executor);
    auto found = resolver.resolve(where.host, std::to_string(where.port),
                                  tcp::resolver::numeric_service | tcp::resolver::passive, ec);
    if (ec || found.empty())
        return fail("cannot resolve the host (" + ec.message() + ")");
    tcp::acceptor acceptor(executor);
    tcp::endpoint endpoint = found.begin()->endpoint();
    acceptor.open(endpoint.protocol(), ec);
    if (!ec)
        acceptor.set_option(net::socket_base::reuse_address(true), ec);
    if (!ec)
        acceptor.bind(endpoint, ec);
    if (!ec)
        acceptor.listen(net::socket_base::max_listen_connections, ec);
    if (ec)
        return fail(ec.message());
    return std::unique_ptr<status_server>(
        new status_server(std::move(acceptor), std::move(sources), std::move(security), role));
}

status_server::status_server(tcp::acceptor acceptor, status_sources sources, std::shared_ptr<web_security> security,
                             server_role role)
    : acceptor_(std::move(acceptor)), sources_(std::move(sources)), security_(std::move(security)), role_(role) {}

status_server::~status_server() = default;

void status_server::start() { net::co_spawn(acceptor_.get_executor(), accept_loop(), rethrow_bug); }

void status_server::stop() {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
}

std::uint16_t status_server::port() const {
    boost::system::error_code ec;
    auto endpoint = acceptor_.local_endpoint(ec);
    return ec ? 0 : endpoint.port();
}

awaitable<void> status_server::accept_loop() {
    while (acceptor_.is_open()) {
        auto [ec, socket] = co_await acceptor_.async_accept(use_op);
        if (ec == net::error::operation_aborted || !acceptor_.is_open())
            co_return;
        if (ec) {
            // Out of descriptors, or a peer gone before the accept: pause, then go on.
            net::steady_timer pause(acceptor_.get_executor(), std::chrono::milliseconds(100));
            co_await pause.async_wait(use_op);
            continue;
        }
        // An answer over TLS goes out in several records: without this, the second waits
        // for the client's delayed ACK of the first (40 ms on Linux).
        boost::system::error_code ignored;
        socket.set_option(tcp::no_delay(true), ignored);
        net::co_spawn(acceptor_.get_executor(), serve(std::move(socket), sources_, security_, role_), rethrow_bug);
    }
}

} // namespace mirror::daemon
