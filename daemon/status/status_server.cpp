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

#include <algorithm>
#include <chrono>
#include <exception>
#include <map>
#include <mutex>

#include <sys/resource.h>

namespace mirror::daemon {

namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = net::ip::tcp;

constexpr auto request_deadline = std::chrono::seconds(10); // a scraper is quick; a stalled peer is cut
/// A connection's place in its listener's table.
struct connection_slot {
    net::ip::address peer;
    std::chrono::steady_clock::time_point since = std::chrono::steady_clock::now();
    bool waiting = true;                 ///< for its TLS handshake or a request's head: it may be closed for room
    beast::tcp_stream* stream = nullptr; ///< while serve() runs (the listener's one I/O thread uses it)
    bool counted = true;                 ///< still counted in the table (not closed for room)
};

/// The connections a listener holds: in total and by address, under its limits. Used on
/// the listener's I/O thread; the mutex is for refused(), read from anywhere.
class connection_table {
public:
    explicit connection_table(connection_limits limits) : limits_(limits) {}

    /// A place for a new connection from `peer`; null when it is refused (counted).
    std::shared_ptr<connection_slot> take(net::ip::address const& peer) {
        std::lock_guard lock(mutex_);
        if (by_address_[peer] >= limits_.per_address || (slots_.size() >= limits_.total && !make_room())) {
            if (by_address_[peer] == 0)
                by_address_.erase(peer);
            ++refused_;
            return nullptr;
        }
        ++by_address_[peer];
        auto slot = std::make_shared<connection_slot>();
        slot->peer = peer;
        slots_.push_back(slot);
        return slot;
    }
    void give_back(std::shared_ptr<connection_slot> const& slot) {
        std::lock_guard lock(mutex_);
        if (!slot->counted)
            return;
        forget(slot);
    }
    std::uint64_t refused() const {
        std::lock_guard lock(mutex_);
        return refused_;
    }

private:
    /// Closes the oldest waiting connection of the address that holds the most; false when
    /// every connection is busy with a request.
    bool make_room() {
        std::shared_ptr<connection_slot> victim;
        for (auto const& slot : slots_) {
            if (!slot->waiting || slot->stream == nullptr)
                continue;
            if (!victim || by_address_[slot->peer] > by_address_[victim->peer] ||
                (by_address_[slot->peer] == by_address_[victim->peer] && slot->since < victim->since))
                victim = slot;
        }
        if (!victim)
            return false;
        victim->stream->cancel(); // its read ends with operation_aborted, and serve() with it
        forget(victim);
        ++refused_;
        return true;
    }
    void forget(std::shared_ptr<connection_slot> const& slot) {
        slot->counted = false;
        std::erase(slots_, slot);
        if (auto found = by_address_.find(slot->peer); found != by_address_.end() && --found->second == 0)
            by_address_.erase(found);
    }

    connection_limits const limits_;
    mutable std::mutex mutex_;
    std::map<net::ip::address, std::size_t> by_address_;
    std::vector<std::shared_ptr<connection_slot>> slots_;
    std::uint64_t refused_ = 0;
};

namespace {

/// `limits`, its total kept to an eighth of the descriptors this process may open.
connection_limits within_descriptors(connection_limits limits) {
    rlimit files{};
    if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY)
        limits.total = std::max<std::size_t>(1, std::min<std::size_t>(limits.total, files.rlim_cur / 8));
    return limits;
}

} // namespace


namespace {

constexpr unsigned max_requests_per_connection = 100;
// A kept-alive connection waits this long for its next request, and no connection lives
// longer than connection_lifetime: held-open sockets are what a flood of clients costs.
constexpr auto keep_alive_idle = std::chrono::seconds(5);
constexpr auto connection_lifetime = std::chrono::seconds(60);

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

/// A plain-text answer of `status` to `request`, `header` set to `value`.
bhttp::response<bhttp::string_body> plain_answer(bhttp::request<bhttp::empty_body> const& request,
                                                 bhttp::status status, bhttp::field header, char const* value,
                                                 std::string body) {
    bhttp::response<bhttp::string_body> out{status, request.version()};
    out.keep_alive(request.keep_alive());
    out.set(bhttp::field::server, "fdl-mirror");
    out.set(bhttp::field::content_type, "text/plain; charset=utf-8");
    out.set(header, value);
    out.body() = std::move(body);
    out.prepare_payload();
    return out;
}

bhttp::response<bhttp::string_body> unauthorized(bhttp::request<bhttp::empty_body> const& request) {
    return plain_answer(request, bhttp::status::unauthorized, bhttp::field::www_authenticate,
                        "Basic realm=\"fdl-mirror\", charset=\"UTF-8\"",
                        "fdl-mirror: this endpoint needs basic authentication (basic_auth_users of the web "
                        "configuration)\n");
}

/// Too many logins wait to be compared: come back in a second, as a scraper will.
bhttp::response<bhttp::string_body> busy(bhttp::request<bhttp::empty_body> const& request) {
    return plain_answer(request, bhttp::status::service_unavailable, bhttp::field::retry_after, "1",
                        "fdl-mirror: too many logins are being checked at once; try again\n");
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
                               std::shared_ptr<web_settings const> const& settings, connection_slot& slot) {
    beast::flat_buffer buffer;
    auto const started = std::chrono::steady_clock::now();
    for (unsigned served = 0; served < max_requests_per_connection; ++served) {
        if (std::chrono::steady_clock::now() - started > connection_lifetime)
            co_return;
        bhttp::request_parser<bhttp::empty_body> parser;
        parser.header_limit(8 * 1024);
        beast::get_lowest_layer(stream).expires_after(served == 0 ? request_deadline : keep_alive_idle);
        slot.waiting = true;
        auto [read_ec, n] = co_await bhttp::async_read(stream, buffer, parser, use_op);
        slot.waiting = false;
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
        else if (allowed == auth_result::busy)
            out = busy(request);
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
                             std::shared_ptr<web_settings const> const& settings, connection_slot& slot) {
    beast::flat_buffer buffer;
    auto const started = std::chrono::steady_clock::now();
    for (unsigned served = 0; served < max_requests_per_connection; ++served) {
        if (std::chrono::steady_clock::now() - started > connection_lifetime)
            co_return;
        bhttp::request_parser<bhttp::string_body> parser;
        parser.header_limit(8 * 1024);
        parser.body_limit(max_event_body);
        // The head first, on its own deadline: what it alone refuses (another method, a
        // body over the limit by its Content-Length, no signature, a repository without
        // webhooks) is answered before a byte of the body is read or held.
        beast::get_lowest_layer(stream).expires_after(served == 0 ? request_deadline : keep_alive_idle);
        slot.waiting = true;
        auto [head_ec, head_n] = co_await bhttp::async_read_header(stream, buffer, parser, use_op);
        slot.waiting = false;
        if (head_ec)
            co_return;
        if (security != nullptr && security->current() != settings)
            co_return;
        auto const& request = parser.get();
        auto header = [&](std::string_view name) {
            auto found = request.find(beast::string_view(name.data(), name.size()));
            return found == request.end() ? std::string_view() : std::string_view(found->value());
        };
        event_request event{std::string_view(request.target()), header("X-Hub-Signature-256"),
                            header("X-Fdl-Timestamp"), std::string_view(), false};
        bhttp::response<bhttp::string_body> out;
        out.version(request.version());
        out.set(bhttp::field::server, "fdl-mirror");
        out.set(bhttp::field::content_type, "application/json");
        std::optional<control_answer> answered;
        bool body_read = false;
        if (request.method() != bhttp::verb::post) {
            out.result(bhttp::status::method_not_allowed);
            out.set(bhttp::field::allow, "POST");
            out.body() = "{\"error\":\"the event paths take POST only\"}\n";
        } else if (!sources.event) {
            out.result(bhttp::status::service_unavailable);
            out.body() = "{\"error\":\"no events here\"}\n";
        } else {
            event.body_too_large = parser.content_length() && *parser.content_length() > max_event_body;
            if (!event.body_too_large && sources.event_head)
                answered = sources.event_head(event);
            if (!answered && !event.body_too_large) {
                auto [read_ec, n] = co_await bhttp::async_read(stream, buffer, parser, use_op);
                event.body_too_large = read_ec == bhttp::error::body_limit;
                if (read_ec && !event.body_too_large)
                    co_return;
                body_read = !event.body_too_large;
                event.body = body_read ? std::string_view(request.body()) : std::string_view();
            }
            if (!answered)
                answered = sources.event(event);
            out.result(static_cast<bhttp::status>(answered->status));
            out.body() = std::move(answered->json);
        }
        // A body not read (refused from the head, or too large) leaves the connection
        // unusable: it ends after this answer.
        out.keep_alive(request.keep_alive() && (body_read || (!parser.content_length() && !parser.chunked())));
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
                                 std::shared_ptr<web_settings const> const& settings, server_role role,
                                 connection_slot& slot) {
    if (role == server_role::events)
        co_await serve_events(stream, sources, security, settings, slot);
    else
        co_await serve_requests(stream, sources, peer, status_allowed, security, settings, slot);
}

/// `slot`: the connection's place in `table`, given back when it ends.
awaitable<void> serve(tcp::socket socket, status_sources sources, std::shared_ptr<web_security> security,
                      server_role role, std::shared_ptr<connection_table> table, std::shared_ptr<connection_slot> slot) {
    struct give_back_at_end {
        std::shared_ptr<connection_table> table;
        std::shared_ptr<connection_slot> slot;
        ~give_back_at_end() {
            slot->stream = nullptr;
            table->give_back(slot);
        }
    } at_end{table, slot};
    boost::system::error_code peer_ec;
    auto const peer = socket.remote_endpoint(peer_ec);
    bool const status_allowed = !peer_ec && serves_status_to(peer.address());
    auto const settings = security ? security->current() : nullptr;
    if (settings == nullptr || settings->tls == nullptr) {
        beast::tcp_stream stream(std::move(socket));
        slot->stream = &stream;
        co_await serve_connection(stream, sources, peer.address(), status_allowed, security.get(), settings, role,
                                  *slot);
        beast::error_code ignored;
        stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
        co_return;
    }
    beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(socket)), *settings->tls);
    slot->stream = &beast::get_lowest_layer(stream);
    beast::get_lowest_layer(stream).expires_after(request_deadline);
    auto [handshake_ec] = co_await stream.async_handshake(net::ssl::stream_base::server, use_op);
    if (handshake_ec)
        co_return; // plain HTTP, an unknown CA, no client certificate where one is required
    if (!peer_has_allowed_san(stream.native_handle(), settings->config.tls->client_allowed_sans))
        co_return; // as exporter-toolkit: the connection ends, no answer
    co_await serve_connection(stream, sources, peer.address(), status_allowed, security.get(), settings, role, *slot);
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
                                                           server_role role, std::optional<connection_limits> limits) {
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
    auto const chosen = limits.value_or(role == server_role::events ? events_connection_limits : connection_limits{});
    return std::unique_ptr<status_server>(new status_server(std::move(acceptor), std::move(sources),
                                                            std::move(security), role, within_descriptors(chosen)));
}

status_server::status_server(tcp::acceptor acceptor, status_sources sources, std::shared_ptr<web_security> security,
                             server_role role, connection_limits limits)
    : acceptor_(std::move(acceptor)), sources_(std::move(sources)), security_(std::move(security)), role_(role),
      connections_(std::make_shared<connection_table>(limits)) {}

std::uint64_t status_server::refused_connections() const { return connections_->refused(); }

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
        // Past a limit the connection is closed at once: it holds no descriptor and no
        // buffer, and the ones in hand (a scraper's among them) go on.
        boost::system::error_code ignored;
        auto const peer = socket.remote_endpoint(ignored);
        auto slot = ignored ? nullptr : connections_->take(peer.address());
        if (slot == nullptr) {
            socket.close(ignored);
            continue;
        }
        // An answer over TLS goes out in several records: without this, the second waits
        // for the client's delayed ACK of the first (40 ms on Linux).
        socket.set_option(tcp::no_delay(true), ignored);
        net::co_spawn(acceptor_.get_executor(),
                      serve(std::move(socket), sources_, security_, role_, connections_, std::move(slot)), rethrow_bug);
    }
}

} // namespace mirror::daemon
