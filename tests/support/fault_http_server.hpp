#pragma once
// An in-process HTTP/1.1 origin on 127.0.0.1 for the failures no real server makes on
// demand: statuses, early closes, resets, wrong lengths, stalls (tests/support/http_fault.hpp).
// Boost.Beast reads the requests; responses are written byte by byte as programmed, so
// they can be wrong on purpose.

#include "core/io/net.hpp"
#include "tests/support/http_fault.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace mirror::test {

/// fault_http_server only (fault_proxy relays its server's framing): the response without
/// Content-Length, in `Transfer-Encoding: chunked`, each byte of the body a chunk of its own
/// sent `per_byte` after the one before (a slow drip whose length the client cannot know),
/// then the last chunk. A drip_body fault carrying that header.
fault chunked_drip_body(std::chrono::milliseconds per_byte);

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
    /// Serves at `path` a body made anew for each request: `make(n)` for the n-th one (from
    /// 1). For an origin that answers differently every time (an endless listing).
    void put_generated(std::string path, std::function<std::string(std::size_t)> make);
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
    mutable std::map<std::string, std::pair<std::function<std::string(std::size_t)>, std::size_t>> generated_;
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
