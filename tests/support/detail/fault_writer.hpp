#pragma once
// Writing a response with a fault applied, on a plain or a TLS stream: what
// fault_http_server and fault_proxy share once they know what to answer.

#include "core/io/net.hpp"
#include "tests/support/http_fault.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/asio/socket_base.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/stream_traits.hpp>

#include <chrono>
#include <string>

namespace mirror::test::detail {

/// Every wait of a fault injector has a deadline, so a test that forgets a client cannot
/// hang it.
inline constexpr std::chrono::seconds io_deadline{30};

inline awaitable<void> sleep_for(std::chrono::milliseconds how_long) {
    net::steady_timer timer(co_await net::this_coro::executor);
    timer.expires_after(how_long);
    co_await timer.async_wait(use_op);
}

/// Writes all of `bytes`; false when the peer has gone.
template <class Stream>
awaitable<bool> send(Stream& stream, std::string bytes) {
    boost::beast::get_lowest_layer(stream).expires_after(io_deadline);
    auto [error, written] = co_await net::async_write(stream, net::buffer(bytes), use_op);
    co_return !error;
}

/// Closes the connection with a TCP reset (SO_LINGER with a zero timeout), not a FIN.
template <class Stream>
void reset(Stream& stream) {
    auto& socket = boost::beast::get_lowest_layer(stream).socket();
    boost::system::error_code ignored;
    socket.set_option(net::socket_base::linger(true, 0), ignored);
    socket.close(ignored);
}

/// Writes `out` as `f` says: the body faults (short, long, padded, reset or stalled
/// mid-body) here, any other fault as a normal response. True when the connection may
/// carry another request; the caller closes it otherwise.
template <class Stream>
awaitable<bool> write_response(Stream& stream, raw_response out, fault const& f) {
    std::string body = out.send_body ? std::move(out.body) : std::string();
    std::size_t half = body.size() / 2;
    bool sent = false;
    switch (f.what) {
    case fault::action::short_body:
        co_await send(stream, render_head(out, out.length) + body.substr(0, half));
        co_return false;
    case fault::action::reset_mid_body:
        if (co_await send(stream, render_head(out, out.length) + body.substr(0, half)))
            co_await sleep_for(std::chrono::milliseconds(20)); // let the half arrive before the reset
        reset(stream);
        co_return false;
    case fault::action::stall_mid_body:
        sent = co_await send(stream, render_head(out, out.length) + body.substr(0, half));
        if (sent)
            co_await sleep_for(f.stall);
        sent = sent && co_await send(stream, body.substr(half));
        break;
    case fault::action::drip_body:
        sent = co_await send(stream, render_head(out, out.length));
        for (std::size_t i = 0; sent && i < body.size(); ++i) {
            co_await sleep_for(f.stall);
            sent = co_await send(stream, body.substr(i, 1));
        }
        break;
    case fault::action::head_then_body:
        sent = co_await send(stream, render_head(out, out.length));
        sent = sent && co_await send(stream, std::move(body));
        break;
    case fault::action::long_body:
        sent = co_await send(stream, render_head(out, out.length) + body + std::string(excess_bytes));
        break;
    case fault::action::padded_body: {
        // Built before the co_await: GCC 12 destroys a conditional's temporaries twice in one.
        std::optional<std::uint64_t> declared;
        if (out.length)
            declared = *out.length + padding_bytes.size();
        std::string bytes = render_head(out, declared) + body;
        if (out.send_body)
            bytes += padding_bytes;
        sent = co_await send(stream, std::move(bytes));
        break;
    }
    default:
        sent = co_await send(stream, render_head(out, out.length) + body);
    }
    co_return sent && out.keep_alive;
}

} // namespace mirror::test::detail
