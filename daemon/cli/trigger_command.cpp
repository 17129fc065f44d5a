#include "daemon/cli/trigger_command.hpp"

#include "config/daemon_config.hpp"
#include "daemon/cli/check_config.hpp"
#include "daemon/common/terminal_text.hpp"
#include "core/io/errors.hpp"
#include "core/io/net.hpp"
#include "verify/error.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <boost/url/encode.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>

#include <chrono>
#include <cstdio>
#include <optional>

namespace mirror::daemon {

namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace json = boost::json;
using tcp = net::ip::tcp;

namespace {

constexpr int exit_unavailable = 69; // EX_UNAVAILABLE: no daemon answers

struct http_answer {
    unsigned status = 0;
    std::string body;
};

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

result<http_answer> post_blocking(std::string host, std::uint16_t port, std::string target) {
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

std::string text_of(json::value const* v) {
    return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

/// One line for a person, and whether that outcome is a success.
std::pair<std::string, bool> line_of(json::object const& entry) {
    std::string const name = text_of(entry.if_contains("repository"));
    std::string const result = text_of(entry.if_contains("result"));
    std::string const detail = text_of(entry.if_contains("detail"));
    if (result == "started")
        return {name + ": pass started at " + text_of(entry.if_contains("pass_started_at")), true};
    if (result == "queued") {
        std::string since = text_of(entry.if_contains("running_since"));
        return {name + ": queued: " + (since.empty() ? detail : "a pass is running since " + since +
                                                                   "; the next starts right after it"),
                true};
    }
    if (result == "requested")
        return {name + ": requested, " + detail, true};
    return {name + ": " + result + ": " + detail, false};
}

} // namespace

int run_trigger(trigger_command const& cmd) {
    auto loaded = config::load_config(cmd.config);
    if (!loaded) {
        for (auto const& problem : loaded.error())
            std::fprintf(stderr, "%s\n", problem.text().c_str());
        return exit_config;
    }
    std::string target = "/trigger";
    if (cmd.repository)
        target += "?repository=" + boost::urls::encode(*cmd.repository, boost::urls::unreserved_chars);
    auto const host = loopback_host(loaded->listen);
    auto answer = post_blocking(host, loaded->listen.port, target);
    if (!answer) {
        print_error("trigger: " + answer.error().message + ": is `fdl-mirror run --config " + cmd.config +
                    "` running on this host?");
        return exit_unavailable;
    }
    boost::system::error_code ec;
    auto body = json::parse(answer->body, ec);
    auto const* top = !ec && body.is_object() ? &body.get_object() : nullptr;
    if (answer->status != 200 || top == nullptr) {
        std::string why = top != nullptr ? text_of(top->if_contains("error")) : terminal_safe(answer->body.substr(0, 200), false);
        print_error("trigger: the daemon answered " + std::to_string(answer->status) + ": " + why);
        return answer->status == 404 ? 2 : exit_unavailable;
    }
    if (cmd.json) {
        std::fwrite(answer->body.data(), 1, answer->body.size(), stdout);
    }
    bool all_well = true;
    auto const* repositories = top->if_contains("repositories");
    if (repositories != nullptr && repositories->is_array())
        for (auto const& entry : repositories->get_array()) {
            if (!entry.is_object())
                continue;
            auto [line, well] = line_of(entry.get_object());
            all_well = all_well && well;
            if (!cmd.json)
                std::printf("%s\n", terminal_safe(line, false).c_str());
        }
    return all_well ? 0 : 1;
}

} // namespace mirror::daemon
