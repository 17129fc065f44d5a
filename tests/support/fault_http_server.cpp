#include "tests/support/fault_http_server.hpp"

#include "tests/support/detail/fault_writer.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>

#include <charconv>
#include <cstdio>
#include <exception>
#include <optional>

namespace mirror::test {

namespace beast = boost::beast;
namespace http = beast::http;
using net::ip::tcp;

namespace {

std::string text(beast::string_view s) { return std::string(s.data(), s.size()); }

void report_escape(std::exception_ptr escaped) {
    if (!escaped)
        return;
    try {
        std::rethrow_exception(escaped);
    } catch (std::exception const& e) {
        std::fprintf(stderr, "fault_http_server: a connection failed: %s\n", e.what());
    }
}

/// A single range of a body of `size` bytes, inclusive.
struct byte_range {
    std::uint64_t first = 0, last = 0;
    bool satisfiable = true;
};

std::optional<std::uint64_t> number_in(std::string_view digits) {
    std::uint64_t n = 0;
    auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (digits.empty() || error != std::errc{} || end != digits.data() + digits.size())
        return std::nullopt;
    return n;
}

/// "bytes=a-b", "bytes=a-" or "bytes=-n"; nullopt for no Range or one not understood
/// (several ranges included), which is served whole, as RFC 9110 section 14.2 allows.
std::optional<byte_range> parse_range(std::string_view range, std::uint64_t size) {
    if (!range.starts_with("bytes=") || range.find(',') != std::string_view::npos)
        return std::nullopt;
    range.remove_prefix(6);
    auto dash = range.find('-');
    if (dash == std::string_view::npos)
        return std::nullopt;
    auto from = range.substr(0, dash), to = range.substr(dash + 1);
    if (from.empty()) { // the last n bytes
        auto n = number_in(to);
        if (!n)
            return std::nullopt;
        if (*n == 0 || size == 0)
            return byte_range{0, 0, false};
        return byte_range{size - std::min(*n, size), size - 1};
    }
    auto first = number_in(from);
    auto last = to.empty() ? std::optional<std::uint64_t>(size == 0 ? 0 : size - 1) : number_in(to);
    if (!first || !last || (!to.empty() && *last < *first))
        return std::nullopt;
    if (*first >= size)
        return byte_range{0, 0, false};
    return byte_range{*first, std::min(*last, size - 1)};
}

/// Whether `f` is chunked_drip_body's.
bool is_chunked_drip(fault const& f) {
    if (f.what != fault::action::drip_body)
        return false;
    for (auto const& [name, value] : f.headers)
        if (beast::iequals(name, "Transfer-Encoding") && beast::iequals(value, "chunked"))
            return true;
    return false;
}

/// `out` without Content-Length, its body a one-byte chunk every `per_byte`, then the last
/// chunk. True when the connection may carry another request.
awaitable<bool> write_chunked_drip(beast::tcp_stream& stream, raw_response out, std::chrono::milliseconds per_byte) {
    bool sent = co_await detail::send(stream, render_head(out, std::nullopt));
    if (!out.send_body)
        co_return sent && out.keep_alive;
    for (std::size_t i = 0; sent && i < out.body.size(); ++i) {
        co_await detail::sleep_for(per_byte);
        std::string chunk = "1\r\n" + out.body.substr(i, 1) + "\r\n";
        sent = co_await detail::send(stream, std::move(chunk));
    }
    std::string last = "0\r\n\r\n";
    sent = sent && co_await detail::send(stream, std::move(last));
    co_return sent && out.keep_alive;
}

} // namespace

fault chunked_drip_body(std::chrono::milliseconds per_byte) {
    fault f = drip_body(per_byte);
    f.headers.emplace_back("Transfer-Encoding", "chunked");
    return f;
}

std::string fault_http_server::etag_of(std::string_view body) {
    std::uint64_t hash = 14695981039346656037ull; // FNV-1a, 64 bits
    for (unsigned char c : body)
        hash = (hash ^ c) * 1099511628211ull;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
    return "\"" + std::string(hex) + "\"";
}

fault_http_server::fault_http_server(std::initializer_list<std::pair<std::string const, std::string>> objects)
    : objects_(objects) {
    tcp::endpoint any_port(net::ip::address_v4::loopback(), 0);
    acceptor_.open(any_port.protocol());
    acceptor_.bind(any_port);
    acceptor_.listen();
    port_ = acceptor_.local_endpoint().port();
    net::co_spawn(io_, accept_loop(), report_escape);
    thread_ = std::thread([this] { io_.run(); });
}

fault_http_server::~fault_http_server() {
    io_.stop();
    thread_.join();
    // io_'s destructor then destroys the suspended connections, closing their sockets.
}

void fault_http_server::put_generated(std::string path, std::function<std::string(std::size_t)> make) {
    std::lock_guard lock(mutex_);
    generated_[std::move(path)] = {std::move(make), 0};
}

void fault_http_server::put(std::string path, std::string body) {
    std::lock_guard lock(mutex_);
    objects_[std::move(path)] = std::move(body);
}

void fault_http_server::fail_request(std::size_t n, fault f) {
    std::lock_guard lock(mutex_);
    by_number_[n] = std::move(f);
}

void fault_http_server::fail_path(std::string path, fault f, std::size_t times) {
    std::lock_guard lock(mutex_);
    by_path_[std::move(path)] = {std::move(f), times};
}

std::vector<recorded_request> fault_http_server::requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
}

std::size_t fault_http_server::connections() const {
    std::lock_guard lock(mutex_);
    return connections_;
}

std::string fault_http_server::url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }

awaitable<void> fault_http_server::accept_loop() {
    for (;;) {
        auto [error, socket] = co_await acceptor_.async_accept(use_op);
        if (error)
            co_return;
        std::size_t number = 0;
        {
            std::lock_guard lock(mutex_);
            number = ++connections_;
        }
        net::co_spawn(io_, serve(std::move(socket), number), report_escape);
    }
}

/// Records a request and returns its fault: by its number, else by its path.
fault fault_http_server::record(recorded_request seen, std::string const& path) {
    std::lock_guard lock(mutex_);
    requests_.push_back(std::move(seen));
    if (auto it = by_number_.find(requests_.size()); it != by_number_.end())
        return it->second;
    auto it = by_path_.find(path);
    if (it == by_path_.end())
        return {};
    fault f = it->second.first;
    if (--it->second.second == 0)
        by_path_.erase(it);
    return f;
}

auto fault_http_server::answer(std::string_view method, std::string const& path, std::string_view if_none_match,
                               std::string_view range) const -> reply {
    if (method != "GET" && method != "HEAD")
        return {405, {{"Allow", "GET, HEAD"}}, "method not allowed\n"};
    std::string body;
    {
        std::lock_guard lock(mutex_);
        if (auto made = generated_.find(path); made != generated_.end()) {
            body = made->second.first(++made->second.second);
        } else {
            auto it = objects_.find(path);
            if (it == objects_.end())
                return {404, {}, "not found\n"};
            body = it->second;
        }
    }
    std::string etag = etag_of(body);
    if (if_none_match == "*" || (!if_none_match.empty() && if_none_match.find(etag) != std::string_view::npos))
        return {304, {{"ETag", etag}}, "", false};
    header_list headers{{"ETag", etag}, {"Accept-Ranges", "bytes"}, {"Content-Type", "application/octet-stream"}};
    auto wanted = parse_range(range, body.size());
    if (!wanted)
        return {200, std::move(headers), std::move(body)};
    if (!wanted->satisfiable) {
        headers.emplace_back("Content-Range", "bytes */" + std::to_string(body.size()));
        return {416, std::move(headers), ""};
    }
    headers.emplace_back("Content-Range", "bytes " + std::to_string(wanted->first) + "-" +
                                              std::to_string(wanted->last) + "/" + std::to_string(body.size()));
    return {206, std::move(headers), body.substr(wanted->first, wanted->last - wanted->first + 1)};
}

awaitable<void> fault_http_server::serve(tcp::socket socket, std::size_t connection) {
    beast::tcp_stream stream(std::move(socket));
    beast::flat_buffer buffer;
    for (;;) {
        http::request<http::string_body> request;
        stream.expires_after(detail::io_deadline);
        auto [read_error, read_bytes] = co_await http::async_read(stream, buffer, request, use_op);
        if (read_error)
            co_return; // the client closed, or sent what is not HTTP

        recorded_request seen{text(request.method_string()), text(request.target()), {}, connection};
        for (auto const& field : request)
            seen.headers.emplace_back(text(field.name_string()), text(field.value()));
        std::string path = seen.target.substr(0, seen.target.find('?'));
        fault f = record(seen, path);

        if (f.what == fault::action::close_before_headers)
            co_return; // the stream's destructor closes the socket
        if (f.what == fault::action::lose_answer) {
            detail::reset(stream); // an origin has no work to lose: a reset without a byte
            co_return;
        }
        if (f.what == fault::action::stall_before_headers)
            co_await detail::sleep_for(f.stall);

        std::string injected = f.body.empty() ? "injected " + std::to_string(f.status) + "\n" : f.body;
        reply out = f.status != 0 ? reply{f.status, {}, std::move(injected)}
                                  : answer(seen.method, path, text(request[http::field::if_none_match]),
                                           text(request[http::field::range]));
        out.headers.insert(out.headers.end(), f.headers.begin(), f.headers.end());
        raw_response response{out.status, std::move(out.headers), std::move(out.body), std::nullopt,
                              seen.method != "HEAD", request.keep_alive()};
        if (is_chunked_drip(f)) {
            if (!co_await write_chunked_drip(stream, std::move(response), f.stall))
                co_return;
            continue;
        }
        if (out.has_length) // of the body a GET would get, for HEAD too
            response.length = response.body.size();
        if (f.what == fault::action::interim_first) {
            std::string interim = "HTTP/1.1 100 Continue\r\n\r\n"
                                  "HTTP/1.1 103 Early Hints\r\nLink: </lake/fdl.json>; rel=preload\r\n\r\n";
            auto [ec, n] = co_await net::async_write(stream, net::buffer(interim), use_op);
            if (ec)
                co_return;
        }
        if (!co_await detail::write_response(stream, std::move(response), f))
            co_return;
    }
}

} // namespace mirror::test
