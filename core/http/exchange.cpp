#include "core/http/detail/exchange.hpp"

#include "core/http/pool_receive.hpp"
#include "core/http/status.hpp"
#include "core/http/tcp_options.hpp"
#include "core/io/blocking_pool.hpp"
#include "core/io/errors.hpp"
#include "core/io/text.hpp"

#include <boost/beast/http.hpp>

#include <openssl/ssl.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <type_traits>

namespace mirror::http::detail {

namespace bhttp = beast::http;
using io::request_failure;

namespace {

/// Interim (1xx) answers skipped before a final one; past this the server is not answering.
constexpr int max_interim_answers = 16;

/// The kind of a transport failure in a step whose own kind is `at_step`: a timeout
/// wherever it happens, and a malformed answer rather than a cut connection when Beast's
/// parser refused what came.
io::request_failure failure_of(io::request_failure at_step, boost::system::error_code const& ec) {
    if (ec == beast::error::timeout)
        return io::request_failure::timeout;
    bool parser_refused = ec.category() == bhttp::make_error_code(bhttp::error::bad_version).category() &&
                          ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message;
    if ((at_step == io::request_failure::reset || at_step == io::request_failure::truncated) && parser_refused)
        return io::request_failure::protocol;
    return at_step;
}

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
    return out;
}

/// When a body of `expected` bytes, whose reading started at `started`, must have arrived.
std::chrono::steady_clock::time_point body_deadline(client_settings const& settings, std::uint64_t expected,
                                                    std::chrono::steady_clock::time_point started) {
    auto const rate = std::max<std::uint64_t>(settings.min_body_rate, 1);
    // expected * 1000 cannot overflow below 2^50 bytes; past that, a day is as good as forever.
    auto const needed = std::chrono::milliseconds(expected < (1ull << 50) ? expected * 1000 / rate : 1ull << 40);
    return started + settings.body_grace + needed;
}

/// The failure of a body that came slower than the settings' minimum rate.
error body_too_slow(client_settings const& settings, std::string const& what, std::uint64_t received,
                    exchange_outcome& outcome) {
    outcome.failure = io::request_failure::timeout;
    return make_error(io::store_errc::transient, what + ": the body came slower than " +
                                                        std::to_string(settings.min_body_rate) + " bytes a second (" +
                                                        std::to_string(received) + " bytes in time)");
}

/// What one trip to the pool brought, on either kind of stream.
struct trip {
    std::size_t bytes = 0;
    bool closed = false; ///< the peer closed (for TLS, with or without close_notify)
    boost::system::error_code failed;
};

constexpr std::chrono::milliseconds trip_quiet{2}, trip_longest{100};

trip receive_trip(beast::tcp_stream& stream, std::span<char> into) {
    auto got = receive_available(stream.socket().native_handle(), into, trip_quiet, trip_longest);
    trip out{got.bytes, got.closed, {}};
    if (got.error != 0)
        out.failed = boost::system::error_code(got.error, boost::system::system_category());
    return out;
}

/// TLS: OpenSSL's reads on the socket made non-blocking for the trip, so that a record
/// still arriving returns would_block instead of holding the thread; the same quiet and
/// longest waits as receive_available.
trip receive_trip(beast::ssl_stream<beast::tcp_stream>& stream, std::span<char> into) {
    auto& socket = beast::get_lowest_layer(stream).socket();
    int const fd = socket.native_handle();
    trip out;
    boost::system::error_code ec, ignored;
    socket.non_blocking(true, ec);
    auto const until = std::chrono::steady_clock::now() + trip_longest;
    while (!ec && out.bytes < into.size()) {
        acknowledge_at_once(fd);
        out.bytes += stream.read_some(net::buffer(into.data() + out.bytes, into.size() - out.bytes), ec);
        if (ec != net::error::would_block && ec != net::error::try_again)
            continue;
        ec = {};
        auto const now = std::chrono::steady_clock::now();
        if (now >= until || !wait_readable(fd, std::min<std::chrono::steady_clock::duration>(trip_quiet, until - now)))
            break; // quiet: the I/O thread waits for the rest
    }
    socket.non_blocking(false, ignored);
    if (ec == net::error::eof || ec == net::ssl::error::stream_truncated)
        out.closed = true;
    else
        out.failed = ec;
    return out;
}

/// Whether the peer sent more than the body: bytes on the socket, or for TLS, decrypted
/// bytes OpenSSL holds (a record still encrypted may be a session ticket, not data).
bool more_bytes_came(beast::tcp_stream& stream) { return bytes_waiting(stream.socket().native_handle()); }
bool more_bytes_came(beast::ssl_stream<beast::tcp_stream>& stream) { return SSL_pending(stream.native_handle()) > 0; }

/// The body of a 2xx answer of `length` bytes, its socket reads on the receive pool
/// (pool_receive.hpp) and its waits on the I/O thread, delivered to `body` chunk by chunk.
/// Checks what run_exchange's Beast loop checks: the deadlines, the length, the bytes past it.
template <class Stream>
awaitable<result<void>> receive_body_on_pool(Stream& stream, connection& c, client_settings const& settings,
                                             std::uint64_t length, std::vector<char>& chunk, io::byte_sink& body,
                                             std::string const& what, exchange_outcome& outcome) {
    auto more_than_length = [&] {
        outcome.failure = io::request_failure::protocol;
        return make_error(io::store_errc::rejected, what + ": the server sent more bytes than its Content-Length (" +
                                                           std::to_string(length) + ")");
    };
    if (c.buffer.size() > length)
        co_return more_than_length();
    // What the head's read took past the head comes first.
    std::size_t filled = net::buffer_copy(net::buffer(chunk), c.buffer.data());
    c.buffer.consume(filled);
    std::uint64_t received = filled;
    auto const started = std::chrono::steady_clock::now();
    while (true) {
        std::size_t const want = static_cast<std::size_t>(
            std::min<std::uint64_t>(chunk.size() - filled, length - received));
        trip got;
        boost::system::error_code waited;
        auto const total = body_deadline(settings, length, started);
        if (want > 0) {
            auto const now = std::chrono::steady_clock::now();
            if (now >= total)
                co_return body_too_slow(settings, what, received, outcome);
            std::function<void()> work = [&] { got = receive_trip(stream, std::span(chunk.data() + filled, want)); };
            co_await settings.receive_pool->run(work);
            if (got.bytes == 0 && !got.closed && !got.failed) {
                // Nothing came for a while: the I/O thread waits for it, under the deadlines.
                c.lowest().expires_after(
                    std::min<std::chrono::steady_clock::duration>(settings.body_idle_timeout, total - now));
                acknowledge_at_once(c.lowest().socket().native_handle());
                auto [ec, n] = co_await stream.async_read_some(net::buffer(chunk.data() + filled, want), use_op);
                got.bytes = n;
                waited = ec;
            }
            filled += got.bytes;
            received += got.bytes;
        }
        if (waited == net::error::eof || waited == net::ssl::error::stream_truncated)
            got.closed = true;
        else if (waited)
            got.failed = waited;
        // Deliver a full chunk, the last one, or what came before a failure (so that a
        // resumed read starts after it).
        if (filled > 0 && (filled == chunk.size() || received == length || got.closed || got.failed)) {
            auto delivered = co_await body.write(std::as_bytes(std::span(chunk.data(), std::exchange(filled, 0))));
            if (!delivered)
                co_return delivered.error();
        }
        if (received == length)
            break;
        if (got.failed == beast::error::timeout && std::chrono::steady_clock::now() >= total)
            co_return body_too_slow(settings, what, received, outcome);
        if (got.closed) {
            outcome.failure = io::request_failure::truncated;
            co_return make_error(io::store_errc::transient,
                                 what + ": the body ended before its Content-Length (the peer closed)");
        }
        if (got.failed)
            co_return transport_error(what, "reading the body", got.failed, io::request_failure::truncated,
                                      outcome.failure);
    }
    if (more_bytes_came(stream))
        co_return more_than_length();
    co_return result<void>{};
}

using answer_parser = bhttp::response_parser<bhttp::buffer_body>;

/// Sends `req` on `stream`: its body from the caller's string, not copied.
template <class Stream>
awaitable<result<void>> send_request(Stream& stream, connection& c, client_settings const& settings,
                                     request const& req, std::string const& what, exchange_outcome& outcome) {
    bhttp::request<bhttp::span_body<char const>> out{bhttp::string_to_verb(req.method), req.where.target(), 11};
    out.set(bhttp::field::host, req.where.host_header());
    out.set(bhttp::field::user_agent, settings.user_agent);
    for (auto const& [name, value] : req.headers)
        out.set(name, value);
    if (!req.body.empty() || req.method == "PUT" || req.method == "POST") {
        out.body() = bhttp::span_body<char const>::value_type(req.body.data(), req.body.size());
        out.prepare_payload();
    }
    c.lowest().expires_after(settings.header_timeout);
    auto [write_ec, written] = co_await bhttp::async_write(stream, out, use_op);
    if (write_ec)
        co_return transport_error(what, "sending the request", write_ec, io::request_failure::reset, outcome.failure);
    co_return result<void>();
}

/// Reads the final answer's head into `parser`. Interim answers (100 Continue, 102, 103
/// Early Hints) come before the final one and are skipped (RFC 9110, section 15.2); a
/// parser reads one message, so each has its own.
template <class Stream>
awaitable<result<void>> read_final_head(Stream& stream, connection& c, client_settings const& settings,
                                        bool no_body, std::optional<answer_parser>& parser, std::string const& what,
                                        exchange_outcome& outcome) {
    for (int interim = 0;; ++interim) {
        parser.emplace();
        parser->body_limit(boost::none); // the caller's sink checks sizes against what is pinned
        if (no_body)
            parser->skip(true);
        c.lowest().expires_after(settings.header_timeout);
        acknowledge_at_once(c.lowest().socket().native_handle());
        auto [head_ec, head_bytes] = co_await bhttp::async_read_header(stream, c.buffer, *parser, use_op);
        if (head_ec)
            co_return transport_error(what, "reading the response head", head_ec, io::request_failure::reset,
                                      outcome.failure);
        unsigned status = parser->get().result_int();
        if (status < 100 || status >= 200 || status == 101)
            co_return result<void>(); // final (101 is never asked for: it is malformed below)
        if (interim == max_interim_answers) {
            outcome.failure = io::request_failure::protocol;
            co_return make_error(io::store_errc::transient,
                                 what + ": more than " + std::to_string(max_interim_answers) +
                                     " interim (1xx) answers before the final one");
        }
    }
}

/// The final answer's head, checked: a status that is an HTTP status, and for a resumed
/// read the ETag of the bytes already taken.
result<response_head> head_of(answer_parser const& parser, request const& req, std::string const& what,
                              exchange_outcome& outcome, response_head* seen) {
    auto const& message = parser.get();
    // Beast reads any three digits ("002", "999"): a malformed answer, and the connection
    // is not trusted with another request.
    if (!is_http_status(message.result_int())) {
        outcome.failure = io::request_failure::protocol;
        return make_error(io::store_errc::transient,
                          what + ": a malformed answer (status " + std::to_string(message.result_int()) +
                              " is not an HTTP status)");
    }
    response_head head;
    head.status = message.result_int();
    outcome.status = head.status;
    head.where = req.where;
    for (auto const& field : message)
        head.headers.emplace_back(lower(field.name_string()), std::string(field.value()));
    if (auto length = parser.content_length())
        head.content_length = *length;
    if (seen != nullptr)
        *seen = head;
    // A resumed read is pinned to the ETag of the bytes already taken (If-Range): a server
    // that sends the rest of other bytes anyway must not have them appended.
    for (auto const& [name, pinned] : req.headers)
        if (name == "If-Range" && head.status == 206 && head.header("etag") != pinned) {
            outcome.failure = io::request_failure::protocol; // its body is left unread
            return make_error(io::store_errc::transient,
                              what + ": changed while it was read (the rest came with ETag " +
                                  std::string(io::utf8_prefix(head.header("etag").value_or("none"), 80)) + ", not " +
                                  std::string(io::utf8_prefix(pinned, 80)) + ")");
        }
    return head;
}

/// Reads the body through `chunk` on the I/O thread: a success's into `body`, an error's
/// first 16 KiB into head.error_body. False when it stopped early on a large error body
/// (the connection is not worth draining).
template <class Stream>
awaitable<result<bool>> read_body(Stream& stream, connection& c, client_settings const& settings,
                                  answer_parser& parser, std::vector<char>& chunk, io::byte_sink* body,
                                  response_head& head, std::string const& what, exchange_outcome& outcome) {
    bool const success = head.status >= 200 && head.status < 300;
    std::size_t const kept_error_bytes = 16 * 1024;
    std::size_t filled = 0; // bytes of `chunk` read and not yet delivered
    std::uint64_t received = 0;
    auto const body_started = std::chrono::steady_clock::now();
    while (!parser.is_done()) {
        parser.get().body().data = chunk.data() + filled;
        parser.get().body().size = chunk.size() - filled;
        // One socket read per wait, so the deadline is one of idleness, whatever the speed,
        // within a total that the minimum rate sets: a slow drip ends too.
        auto const total = body_deadline(settings, head.content_length.value_or(received), body_started);
        auto const now = std::chrono::steady_clock::now();
        auto too_slow = [&] { return body_too_slow(settings, what, received, outcome); };
        if (now >= total)
            co_return too_slow();
        c.lowest().expires_after(std::min<std::chrono::steady_clock::duration>(settings.body_idle_timeout, total - now));
        acknowledge_at_once(c.lowest().socket().native_handle());
        auto [read_ec, n] = co_await bhttp::async_read_some(stream, c.buffer, parser, use_op);
        if (read_ec == bhttp::error::need_buffer)
            read_ec = {};
        std::size_t const before = filled;
        filled = chunk.size() - parser.get().body().size;
        received += filled - before;
        // Deliver a full chunk, the last one, or what came before a failure (so that a
        // resumed read starts after it).
        if (filled > 0 && (filled == chunk.size() || parser.is_done() || read_ec)) {
            std::size_t got = std::exchange(filled, 0);
            if (success && body != nullptr) {
                auto delivered = co_await body->write(std::as_bytes(std::span(chunk.data(), got)));
                if (!delivered)
                    co_return delivered.error();
            } else if (!success && head.error_body.size() < kept_error_bytes) {
                head.error_body.append(chunk.data(), std::min(got, kept_error_bytes - head.error_body.size()));
            } else if (!success) {
                co_return false;
            }
        }
        if (read_ec) {
            if (read_ec == beast::error::timeout && std::chrono::steady_clock::now() >= total)
                co_return too_slow();
            if (read_ec == bhttp::error::partial_message || read_ec == net::error::eof) {
                outcome.failure = io::request_failure::truncated;
                co_return make_error(io::store_errc::transient,
                                     what + ": the body ended before its Content-Length (" + read_ec.message() + ")");
            }
            co_return transport_error(what, "reading the body", read_ec, io::request_failure::truncated, outcome.failure);
        }
    }
    co_return true;
}

/// Sends the request and reads the answer on one stream type (plain or TLS); fills in
/// `outcome` as it goes.
template <class Stream>
awaitable<result<response_head>> run_exchange(Stream& stream, connection& c, client_settings const& settings,
                                              request const& req, io::byte_sink* body, exchange_outcome& outcome,
                                              response_head* seen) {
    std::string what = req.where.shown();
    if (auto sent = co_await send_request(stream, c, settings, req, what, outcome); !sent)
        co_return sent.error();
    std::optional<answer_parser> head_parser;
    bool const no_body = req.method == "HEAD";
    if (auto read = co_await read_final_head(stream, c, settings, no_body, head_parser, what, outcome); !read)
        co_return read.error();
    auto& parser = *head_parser;
    auto checked = head_of(parser, req, what, outcome, seen);
    if (!checked)
        co_return checked.error();
    response_head head = std::move(*checked);

    bool success = head.status >= 200 && head.status < 300;
    // Beast sizes each socket read by the room left in the connection's buffer, which the
    // head left at 512 bytes: without room, a 256 MiB body takes half a million reads.
    // Chunks of 256 KiB reach copy_object's threshold for hashing on the thread pool, so
    // large bodies are hashed off the I/O thread, on the other core. A smaller body gets a
    // chunk and a buffer of its own size: a connection per transfer holding 512 KiB for a
    // 16 KiB file would cost megabytes at high concurrency.
    constexpr std::size_t chunk_bytes = 256 * 1024, least_chunk_bytes = 4 * 1024;
    std::size_t room = chunk_bytes;
    if (head.content_length)
        room = static_cast<std::size_t>(
            std::clamp<std::uint64_t>(*head.content_length, least_chunk_bytes, chunk_bytes));
    // A large body is received on the pool, straight into the chunk.
    bool const pooled = settings.receive_pool != nullptr && success && body != nullptr && !no_body &&
                        head.content_length && *head.content_length >= settings.receive_on_pool_from;
    // The chunk and the connection's buffer (Beast reads into it) come out of the budget
    // (take_read_buffer).
    std::uint64_t const charge = (pooled ? 1 : 2) * std::uint64_t{room};
    auto buffers = io::take_read_buffer(settings.memory, room, small_read_chunk, charge);
    room = buffers.bytes;
    std::vector<char> chunk(room);
    if (pooled) {
        auto got =
            co_await receive_body_on_pool(stream, c, settings, *head.content_length, chunk, *body, what, outcome);
        if (!got)
            co_return got.error();
        outcome.reusable = parser.get().keep_alive();
        co_return head;
    }
    c.buffer.reserve(room);
    auto whole = co_await read_body(stream, c, settings, parser, chunk, body, head, what, outcome);
    if (!whole)
        co_return whole.error();
    if (!*whole)
        co_return head; // a large error body, left unread
    if (c.buffer.size() > 0 && head.content_length && success && !no_body) {
        outcome.failure = io::request_failure::protocol;
        co_return make_error(io::store_errc::rejected, what + ": the server sent more bytes than its Content-Length (" +
                                                              std::to_string(*head.content_length) + ")");
    }
    outcome.reusable = parser.get().keep_alive() && c.buffer.size() == 0;
    // An idle connection in the pool keeps only a small buffer; the next large body
    // reserves its room again.
    if (outcome.reusable && c.buffer.capacity() > least_chunk_bytes)
        c.buffer.shrink_to_fit();
    co_return head;
}

} // namespace

/// Also says what kind of failure it is, in `failure`.
error transport_error(std::string const& what, std::string const& step, boost::system::error_code const& ec,
                      io::request_failure at_step, io::request_failure& failure) {
    failure = failure_of(at_step, ec);
    if (ec == beast::error::timeout)
        return make_error(io::store_errc::transient, what + ": timed out while " + step);
    return make_error(io::store_errc::transient, what + ": " + step + " failed (" + ec.message() + ")");
}

awaitable<result<response_head>> run_exchange(connection& c, client_settings const& settings, request const& req,
                                              io::byte_sink* body, exchange_outcome& outcome,
                                              response_head* seen) {
    if (c.secure)
        co_return co_await run_exchange(*c.secure, c, settings, req, body, outcome, seen);
    co_return co_await run_exchange(*c.plain, c, settings, req, body, outcome, seen);
}

} // namespace mirror::http::detail
