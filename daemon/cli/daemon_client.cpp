#include "daemon/cli/daemon_client.hpp"

#include "core/io/errors.hpp"
#include "core/io/net.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <optional>

namespace mirror::daemon {

namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = net::ip::tcp;

namespace {

/// Where this host reaches the daemon: its listen address, a wildcard one as loopback.
std::string loopback_host(config::listen_address const& listen) {
    if (listen.host.empty() || listen.host == "0.0.0.0")
        return "127.0.0.1";
    if (listen.host == "::")
        return "::1";
    return listen.host;
}

awaitable<result<http_answer>> post(std::string host, std::uint16_t port, std::string target) {
    auto fail = [&](std::string const& why) {
        return make_error(io::store_errc::transient,
                          "no daemon answers on " + host + ":" + std::to_string(port) + " (" + why + ")");
    };
    auto executor = co_await net::this_coro::executor;
    tcp::resolver resolver(executor);
    auto [resolve_ec, found] = co_await resolver.async_resolve(host, std::to_string(port), use_op);
    if (resolve_ec)
        co_return fail(resolve_ec.message());
    beast::tcp_stream stream(executor);
    // The daemon answers once the passes started, or after 5 s: room for that, and no more.
    stream.expires_after(std::chrono::seconds(20));
    auto [connect_ec, endpoint] = co_await stream.async_connect(found, use_op);
    if (connect_ec)
        co_return fail(connect_ec.message());
    bhttp::request<bhttp::empty_body> request(bhttp::verb::post, target, 11);
    request.set(bhttp::field::host, endpoint.address().is_v6() ? "[" + endpoint.address().to_string() + "]"
                                                               : endpoint.address().to_string());
    request.set(bhttp::field::user_agent, "fdl-mirror trigger");
    request.keep_alive(false);
    auto [write_ec, written] = co_await bhttp::async_write(stream, request, use_op);
    if (write_ec)
        co_return fail(write_ec.message());
    beast::flat_buffer buffer;
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(1024 * 1024);
    auto [read_ec, read] = co_await bhttp::async_read(stream, buffer, parser, use_op);
    if (read_ec)
        co_return fail(read_ec.message());
    co_return http_answer{parser.get().result_int(), parser.get().body()};
}

} // namespace

result<http_answer> post_to_daemon(config::listen_address const& listen, std::string target) {
    std::string host = loopback_host(listen);
    std::uint16_t const port = listen.port;
    net::io_context io(1);
    std::optional<result<http_answer>> out;
    net::co_spawn(io, post(std::move(host), port, std::move(target)),
                  [&](std::exception_ptr e, result<http_answer> answer) {
                      if (e)
                          std::rethrow_exception(e);
                      out = std::move(answer);
                  });
    io.run();
    return std::move(*out);
}

} // namespace mirror::daemon
