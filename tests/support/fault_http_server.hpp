#pragma once
// An in-process HTTP/1.1 origin on 127.0.0.1 for the failures no real server makes on
// demand: statuses, early closes, wrong lengths, stalls. Boost.Beast reads the requests;
// responses are written byte by byte as programmed, so they can be wrong on purpose.

#include "core/net.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace mirror::test {

using header_list = std::vector<std::pair<std::string, std::string>>;

/// What to do to one response. The default serves it normally.
struct fault {
    enum class action {
        none,
        close_before_headers, ///< read the request, then close without a byte
        short_body,           ///< headers, then half the body, then close
        long_body,            ///< headers, the body, then excess bytes; the connection stays open
        stall_before_headers, ///< wait `stall`, then respond
        stall_mid_body,       ///< headers and half the body, wait `stall`, then the rest
    };
    action what = action::none;
    unsigned status = 0;     ///< when not 0: this status and a short text body, not the object
    header_list headers;     ///< added to the response (Retry-After, Location…)
    std::chrono::milliseconds stall{0};
};

fault respond_with(unsigned status, header_list headers = {});   ///< 429, 500, 503, 403, 404…
fault redirect_to(unsigned status, std::string location);        ///< 301, 302, 307, 308
fault close_before_headers();
fault short_body();
fault long_body();
fault stall_before_headers(std::chrono::milliseconds how_long);
fault stall_mid_body(std::chrono::milliseconds how_long);

/// One request as the server read it.
struct recorded_request {
    std::string method, target;
    header_list headers;
    std::size_t connection = 0; ///< which accepted connection carried it, from 1
    /// The value of a header (case-insensitive name), "" when absent.
    std::string header(std::string_view name) const;
};

/// Serves `objects` (path -> body) on a free port of 127.0.0.1 from its own thread and
/// io_context. GET and HEAD (else 405); 404 for an unknown path. Each object has a strong
/// ETag (etag_of), Content-Length, Accept-Ranges; `If-None-Match` with its ETag or "*"
/// gives 304, and `Range: bytes=a-b`, `bytes=a-` or `bytes=-n` gives 206 (416 when it
/// starts past the end). Paths are matched without the query string. Keeps connections
/// alive unless the client sends `Connection: close`.
/// Every member may be called from any thread (the state is behind a mutex); the
/// destructor stops the server and closes every connection.
class fault_http_server {
public:
    /// `objects` as in `fault_http_server server({{"/a", "body"}, {"/b", "…"}});`.
    explicit fault_http_server(std::initializer_list<std::pair<std::string const, std::string>> objects = {});
    ~fault_http_server();
    fault_http_server(fault_http_server const&) = delete;
    fault_http_server& operator=(fault_http_server const&) = delete;

    /// Adds or replaces an object ("/data/a.parquet").
    void put(std::string path, std::string body);
    /// Applies `f` to the n-th request the server reads (from 1, over all connections).
    /// Wins over a fault by path.
    void fail_request(std::size_t n, fault f);
    /// Applies `f` to the next `times` requests for `path` (every one by default).
    void fail_path(std::string path, fault f, std::size_t times = std::numeric_limits<std::size_t>::max());

    std::vector<recorded_request> requests() const;
    std::size_t connections() const; ///< connections accepted so far
    std::uint16_t port() const { return port_; }
    std::string url() const; ///< "http://127.0.0.1:PORT/"

    /// The ETag served for a body: a quoted hash of it.
    static std::string etag_of(std::string_view body);

private:
    struct reply {
        unsigned status = 200;
        header_list headers;
        std::string body;
        bool has_length = true; ///< a 304 has neither body nor Content-Length
    };
    awaitable<void> accept_loop();
    awaitable<void> serve(net::ip::tcp::socket socket, std::size_t connection);
    fault record(recorded_request seen, std::string const& path);
    reply answer(std::string_view method, std::string const& path, std::string_view if_none_match,
                 std::string_view range) const;

    mutable std::mutex mutex_; // the test's thread and the server's thread share what follows
    std::map<std::string, std::string> objects_;
    std::map<std::size_t, fault> by_number_;
    std::map<std::string, std::pair<fault, std::size_t>> by_path_;
    std::vector<recorded_request> requests_;
    std::size_t connections_ = 0;

    net::io_context io_{1};
    net::ip::tcp::acceptor acceptor_{io_};
    std::uint16_t port_ = 0;
    std::thread thread_; // last: started once everything above exists
};

} // namespace mirror::test
