#include "daemon/cli/daemon_client.hpp"

#include "core/io/errors.hpp"
#include "core/io/net.hpp"
#include "daemon/status/web_security.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <openssl/evp.h>
#include <openssl/ssl.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
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

/// How this command reaches the daemon's endpoints: its TLS (trusting exactly the
/// daemon's own certificate, read from the web configuration: the name in it need not be
/// this host's) and its credentials, from the environment.
struct client_security {
    std::shared_ptr<net::ssl::context> tls; ///< null: plain HTTP
    std::string authorization;              ///< the Authorization header, or empty
};

std::variant<client_security, std::string> security_for(config::daemon_config const& cfg) {
    client_security out;
    if (!cfg.web_config_file)
        return out;
    auto loaded = load_web_settings(*cfg.web_config_file);
    if (auto const* problems = std::get_if<std::vector<std::string>>(&loaded))
        return "web_config_file: " + problems->front();
    auto const& web = std::get<0>(loaded)->config;
    if (!web.users.empty()) {
        char const* user = std::getenv("FDL_MIRROR_WEB_USER");
        char const* password = std::getenv("FDL_MIRROR_WEB_PASSWORD");
        if (user == nullptr || password == nullptr)
            return "the daemon's endpoints ask for basic authentication (" + cfg.web_config_file->string() +
                   "): set FDL_MIRROR_WEB_USER and FDL_MIRROR_WEB_PASSWORD";
        std::string pair = std::string(user) + ":" + password;
        std::string encoded(4 * ((pair.size() + 2) / 3) + 1, '\0');
        int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(encoded.data()),
                                reinterpret_cast<unsigned char const*>(pair.data()), static_cast<int>(pair.size()));
        encoded.resize(static_cast<std::size_t>(n));
        out.authorization = "Basic " + encoded;
    }
    if (!web.tls)
        return out;
    out.tls = std::make_shared<net::ssl::context>(net::ssl::context::tls_client);
    std::string server_cert = web.tls->cert_pem;
    if (web.tls->cert_file) {
        std::ifstream in(*web.tls->cert_file, std::ios::binary);
        server_cert.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    boost::system::error_code ec;
    out.tls->add_certificate_authority(net::buffer(server_cert), ec);
    if (ec)
        return "web_config_file: the daemon's certificate: " + ec.message();
    // The daemon's own certificate is the trust anchor, whatever issued it.
    X509_VERIFY_PARAM_set_flags(SSL_CTX_get0_param(out.tls->native_handle()), X509_V_FLAG_PARTIAL_CHAIN);
    out.tls->set_verify_mode(net::ssl::verify_peer);
    bool const needs_cert = web.tls->client_auth_type == config::client_auth::require_any ||
                            web.tls->client_auth_type == config::client_auth::require_and_verify;
    char const* cert = std::getenv("FDL_MIRROR_WEB_CLIENT_CERT");
    char const* key = std::getenv("FDL_MIRROR_WEB_CLIENT_KEY");
    if (cert != nullptr && key != nullptr) {
        out.tls->use_certificate_chain_file(cert, ec);
        if (!ec)
            out.tls->use_private_key_file(key, net::ssl::context::pem, ec);
        if (ec)
            return std::string("FDL_MIRROR_WEB_CLIENT_CERT/KEY: ") + cert + ": " + ec.message();
    } else if (needs_cert) {
        return "the daemon's endpoints ask for a client certificate (client_auth_type " +
               std::string(config::to_string(web.tls->client_auth_type)) + " in " + cfg.web_config_file->string() +
               "): set FDL_MIRROR_WEB_CLIENT_CERT and FDL_MIRROR_WEB_CLIENT_KEY to its files";
    }
    return out;
}

template <class Stream>
awaitable<result<http_answer>> exchange(Stream& stream, std::string const& host_header, std::string const& target,
                                        std::string const& authorization, std::string const& where) {
    auto fail = [&](std::string const& why) {
        return make_error(io::store_errc::transient, "no daemon answers on " + where + " (" + why + ")");
    };
    bhttp::request<bhttp::empty_body> request(bhttp::verb::post, target, 11);
    request.set(bhttp::field::host, host_header);
    request.set(bhttp::field::user_agent, "fdl-mirror trigger");
    if (!authorization.empty())
        request.set(bhttp::field::authorization, authorization);
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

awaitable<result<http_answer>> post(std::string host, std::uint16_t port, std::string target,
                                    client_security security) {
    std::string const where = host + ":" + std::to_string(port);
    auto fail = [&](std::string const& why) {
        return make_error(io::store_errc::transient, "no daemon answers on " + where + " (" + why + ")");
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
    std::string const host_header = endpoint.address().is_v6() ? "[" + endpoint.address().to_string() + "]"
                                                               : endpoint.address().to_string();
    if (!security.tls)
        co_return co_await exchange(stream, host_header, target, security.authorization, where);
    beast::ssl_stream<beast::tcp_stream> tls(std::move(stream), *security.tls);
    auto [handshake_ec] = co_await tls.async_handshake(net::ssl::stream_base::client, use_op);
    if (handshake_ec)
        co_return fail("TLS: " + handshake_ec.message());
    co_return co_await exchange(tls, host_header, target, security.authorization, where);
}

} // namespace

result<http_answer> post_to_daemon(config::daemon_config const& cfg, std::string target) {
    auto security = security_for(cfg);
    if (auto const* why = std::get_if<std::string>(&security))
        return make_error(io::store_errc::rejected, *why);
    std::string host = loopback_host(cfg.listen);
    std::uint16_t const port = cfg.listen.port;
    net::io_context io(1);
    std::optional<result<http_answer>> out;
    net::co_spawn(io, post(std::move(host), port, std::move(target), std::get<client_security>(std::move(security))),
                  [&](std::exception_ptr e, result<http_answer> answer) {
                      if (e)
                          std::rethrow_exception(e);
                      out = std::move(answer);
                  });
    io.run();
    return std::move(*out);
}

} // namespace mirror::daemon
