#pragma once
// One HTTP exchange on one connection, for client.cpp: the request written, the head read,
// the body streamed to its sink with every deadline and length check. Internal to
// core/http (it names Beast's types).

#include "core/http/client.hpp"

#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>

#include <optional>
#include <string>

namespace mirror::http::detail {

namespace beast = boost::beast;

/// One connection, plain or TLS, with the bytes read past the last message.
struct connection {
    std::string pool_key; ///< scheme://host:port
    std::optional<beast::tcp_stream> plain;
    std::optional<beast::ssl_stream<beast::tcp_stream>> secure;
    beast::flat_buffer buffer;

    beast::tcp_stream& lowest() { return secure ? beast::get_lowest_layer(*secure) : *plain; }
};

/// What an exchange's observer and its caller learn besides its result.
struct exchange_outcome {
    bool reusable = false; ///< the connection may carry another request
    unsigned status = 0;   ///< the answer's, once its head is read
    io::request_failure failure = io::request_failure::none;
};

/// Also says what kind of failure it is, in `failure`.
error transport_error(std::string const& what, std::string const& step, boost::system::error_code const& ec,
                      io::request_failure at_step, io::request_failure& failure);

/// Sends `req` and reads the answer on `c` (plain or TLS); fills in `outcome` as it goes.
/// For a 2xx answer to anything but HEAD, streams the body into `body` (when given);
/// `seen`, when given, receives the head as soon as it is read.
awaitable<result<response_head>> run_exchange(connection& c, client_settings const& settings, request const& req,
                                              io::byte_sink* body, exchange_outcome& outcome,
                                              response_head* seen);

} // namespace mirror::http::detail
