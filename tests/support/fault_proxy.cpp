#include "tests/support/fault_proxy.hpp"

#include "tests/support/detail/fault_writer.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ssl/stream_base.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <charconv>
#include <cstdio>
#include <exception>
#include <optional>
#include <stdexcept>

namespace mirror::test {

namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = net::ssl;
using net::ip::tcp;

namespace {

using request_message = http::request<http::string_body>;

std::string text(beast::string_view s) { return std::string(s.data(), s.size()); }

void report_escape(std::exception_ptr escaped) {
    if (!escaped)
        return;
    try {
        std::rethrow_exception(escaped);
    } catch (std::exception const& e) {
        std::fprintf(stderr, "fault_proxy: a connection failed: %s\n", e.what());
    }
}

/// `request` sent to 127.0.0.1:`port` on a new connection, and the answer de-framed;
/// nullopt when the server cannot be reached or does not answer in HTTP.
awaitable<std::optional<raw_response>> ask_upstream(std::uint16_t port, request_message const& request) {
    beast::tcp_stream upstream(co_await net::this_coro::executor);
    upstream.expires_after(detail::io_deadline);
    auto [connect_error] =
        co_await upstream.async_connect(tcp::endpoint(net::ip::address_v4::loopback(), port), use_op);
    if (connect_error)
        co_return std::nullopt;
    auto [write_error, written] = co_await http::async_write(upstream, request, use_op);
    if (write_error)
        co_return std::nullopt;
    http::response_parser<http::string_body> parser;
    parser.body_limit(boost::none); // objects and parts of any size the tests use
    bool head = request.method() == http::verb::head;
    if (head)
        parser.skip(true);
    beast::flat_buffer buffer;
    auto [read_error, read] = co_await http::async_read(upstream, buffer, parser, use_op);
    if (read_error)
        co_return std::nullopt;
    auto& message = parser.get();
    raw_response out;
    out.status = message.result_int();
    std::optional<std::uint64_t> announced;
    for (auto const& field : message) {
        if (field.name() == http::field::content_length) {
            std::uint64_t n = 0;
            auto value = field.value();
            if (std::from_chars(value.data(), value.data() + value.size(), n).ec == std::errc())
                announced = n;
            continue;
        }
        // The proxy frames the answer itself, and keeps the client's connection as it likes.
        if (field.name() == http::field::transfer_encoding || field.name() == http::field::connection ||
            field.name() == http::field::keep_alive)
            continue;
        out.headers.emplace_back(text(field.name_string()), text(field.value()));
    }
    out.send_body = !head && out.status != 204 && out.status != 304 && out.status >= 200;
    if (out.send_body) {
        out.body = std::move(message.body());
        out.length = out.body.size();
    } else {
        out.length = announced; // a HEAD's is the GET's length
    }
    co_return out;
}

/// Whether S3 would refuse `request` as a create-only write of a key that exists: a PUT or
/// POST with `If-None-Match: *` whose key a HEAD (with the same credentials) finds.
awaitable<bool> key_taken(std::uint16_t port, request_message const& request) {
    if ((request.method() != http::verb::put && request.method() != http::verb::post) ||
        request[http::field::if_none_match] != "*")
        co_return false;
    auto target = request.target();
    request_message probe{http::verb::head, target.substr(0, target.find('?')), 11};
    for (auto const& field : request)
        if (field.name() != http::field::content_length && field.name() != http::field::content_type &&
            field.name() != http::field::content_md5 && field.name() != http::field::if_none_match &&
            field.name() != http::field::expect && field.name() != http::field::transfer_encoding)
            probe.insert(field.name_string(), field.value());
    auto found = co_await ask_upstream(port, probe);
    co_return found && found->status == 200;
}

/// An answer made here, not upstream: `f`'s status and body, or S3's 412 for a key taken.
raw_response made_answer(fault const& f, bool send_body) {
    raw_response out{f.status, f.headers, f.body.empty() ? "injected " + std::to_string(f.status) + "\n" : f.body};
    out.length = out.body.size();
    out.send_body = send_body;
    return out;
}

} // namespace

fault_proxy::fault_proxy(proxy_options options) : options_(std::move(options)) {
    if (!options_.tls_cert.empty() && !options_.tls_key.empty()) {
        tls_ = std::make_unique<ssl::context>(ssl::context::tls_server);
        boost::system::error_code error;
        tls_->use_certificate_chain_file(options_.tls_cert.string(), error);
        if (!error)
            tls_->use_private_key_file(options_.tls_key.string(), ssl::context::pem, error);
        if (error)
            throw std::runtime_error("fault_proxy: " + options_.tls_cert.string() + ": " + error.message());
    }
    tcp::endpoint any_port(net::ip::address_v4::loopback(), 0);
    acceptor_.open(any_port.protocol());
    acceptor_.bind(any_port);
    acceptor_.listen();
    port_ = acceptor_.local_endpoint().port();
    net::co_spawn(io_, accept_loop(), report_escape);
    thread_ = std::thread([this] { io_.run(); });
}

fault_proxy::~fault_proxy() {
    io_.stop();
    thread_.join();
    // io_'s destructor then destroys the suspended connections, closing their sockets.
}

void fault_proxy::fail_request(std::size_t n, fault f) {
    std::lock_guard lock(mutex_);
    by_number_[n] = std::move(f);
}

void fault_proxy::fail_from(std::size_t n, fault f) {
    std::lock_guard lock(mutex_);
    from_ = n;
    from_fault_ = std::move(f);
}

void fault_proxy::fail_matching(std::string method, std::string target_part, fault f, std::size_t times) {
    std::lock_guard lock(mutex_);
    rules_.push_back({std::move(method), std::move(target_part), std::move(f), times});
}

void fault_proxy::clear_faults() {
    std::lock_guard lock(mutex_);
    by_number_.clear();
    from_ = 0;
    rules_.clear();
}

std::vector<recorded_request> fault_proxy::requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
}

std::size_t fault_proxy::count(std::string_view method, std::string_view target_part) const {
    std::lock_guard lock(mutex_);
    std::size_t n = 0;
    for (auto const& r : requests_)
        n += (method.empty() || r.method == method) && r.target.find(target_part) != std::string::npos;
    return n;
}

std::size_t fault_proxy::connections() const {
    std::lock_guard lock(mutex_);
    return connections_;
}

std::string fault_proxy::url() const { return endpoint() + "/"; }

std::string fault_proxy::endpoint() const {
    return (tls_ ? "https://localhost:" : "http://127.0.0.1:") + std::to_string(port_);
}

std::pair<std::size_t, fault> fault_proxy::record(recorded_request seen) {
    std::lock_guard lock(mutex_);
    std::string method = seen.method, target = seen.target;
    requests_.push_back(std::move(seen));
    std::size_t n = requests_.size();
    if (auto it = by_number_.find(n); it != by_number_.end())
        return {n - 1, it->second};
    if (from_ != 0 && n >= from_)
        return {n - 1, from_fault_};
    for (auto it = rules_.begin(); it != rules_.end(); ++it) {
        if ((!it->method.empty() && it->method != method) || target.find(it->target_part) == std::string::npos)
            continue;
        fault f = it->f;
        if (--it->times == 0)
            rules_.erase(it);
        return {n - 1, f};
    }
    return {n - 1, {}};
}

void fault_proxy::answered(std::size_t index, unsigned status) {
    std::lock_guard lock(mutex_);
    requests_[index].status = status;
}

awaitable<void> fault_proxy::accept_loop() {
    for (;;) {
        auto [error, socket] = co_await acceptor_.async_accept(use_op);
        if (error)
            co_return;
        std::size_t number = 0;
        {
            std::lock_guard lock(mutex_);
            number = ++connections_;
        }
        net::co_spawn(io_, handle(std::move(socket), number), report_escape);
    }
}

template <class Stream>
awaitable<void> fault_proxy::serve(Stream& stream, std::size_t connection) {
    beast::flat_buffer buffer;
    for (;;) {
        http::request_parser<http::string_body> parser;
        parser.body_limit(boost::none); // S3 parts
        beast::get_lowest_layer(stream).expires_after(detail::io_deadline);
        auto [read_error, read_bytes] = co_await http::async_read(stream, buffer, parser, use_op);
        if (read_error)
            co_return; // the client closed, or sent what is not HTTP
        request_message request = parser.release();

        recorded_request seen{text(request.method_string()), text(request.target()), {}, connection};
        for (auto const& field : request)
            seen.headers.emplace_back(text(field.name_string()), text(field.value()));
        auto [index, f] = record(std::move(seen));

        if (f.what == fault::action::close_before_headers)
            co_return; // the stream's destructor closes the socket
        if (f.what == fault::action::stall_before_headers)
            co_await detail::sleep_for(f.stall);
        if (f.what == fault::action::corrupt_request_body && !request.body().empty())
            request.body()[request.body().size() / 2] ^= 0x01; // what a bad link would do
        bool send_body = request.method() != http::verb::head;
        std::optional<raw_response> out;
        if (f.status != 0)
            out = made_answer(f, send_body); // the server never sees this request
        else if (options_.emulate_create_only && co_await key_taken(options_.upstream_port, request))
            out = made_answer(s3_error(412, "PreconditionFailed"), send_body);
        else if (out = co_await ask_upstream(options_.upstream_port, request); !out)
            out = made_answer(respond_with(502), send_body);
        if (f.status == 0)
            out->headers.insert(out->headers.end(), f.headers.begin(), f.headers.end());
        out->keep_alive = request.keep_alive();

        if (f.what == fault::action::lose_answer) {
            detail::reset(stream); // the work is done upstream; the client hears nothing of it
            co_return;
        }
        answered(index, out->status);
        if (!co_await detail::write_response(stream, std::move(*out), f))
            co_return;
    }
}

awaitable<void> fault_proxy::handle(tcp::socket socket, std::size_t connection) {
    if (!tls_) {
        beast::tcp_stream stream(std::move(socket));
        co_await serve(stream, connection);
        co_return;
    }
    beast::ssl_stream<beast::tcp_stream> stream(std::move(socket), *tls_);
    beast::get_lowest_layer(stream).expires_after(detail::io_deadline);
    auto [error] = co_await stream.async_handshake(ssl::stream_base::server, use_op);
    if (error)
        co_return; // a client that refuses the certificate ends here
    co_await serve(stream, connection);
}

} // namespace mirror::test
