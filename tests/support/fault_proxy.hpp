#pragma once
// An in-process HTTP/1.1 reverse proxy on 127.0.0.1, between fdl-mirror and a real server
// (nginx, s3rver), that relays every exchange except the ones a rule picks, which it
// breaks as programmed (tests/support/http_fault.hpp): an injected status (an S3 <Error>
// document, a Retry-After), a close before the answer, an answer lost after the server
// did the work, a body cut short, reset, padded, too long or stalled. Optionally HTTPS in
// front, with any certificate (one for another host, to be refused).

#include "core/io/net.hpp"
#include "tests/support/http_fault.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace mirror::test {

struct proxy_options {
    std::uint16_t upstream_port = 0; ///< the server, plain HTTP on 127.0.0.1
    /// HTTPS in front with this certificate and key when both are set (test_ca makes them,
    /// for any name), else plain HTTP.
    std::filesystem::path tls_cert, tls_key;
    /// S3's create-only semantics, which s3rver lacks (it ignores `If-None-Match: *`): a PUT
    /// or POST with that header for a key the server has (a HEAD finds it) is answered 412
    /// PreconditionFailed, as S3 does, and not forwarded. Not atomic: fine for a client
    /// that never writes one key from two places at once.
    bool emulate_create_only = false;
};

/// The proxy, from its own thread and io_context. Each request goes upstream on a new
/// connection with its headers as sent (Host included: a SigV4 signature names the
/// proxy, which s3rver does not check); the answer comes back re-framed with a
/// Content-Length (a chunked one de-chunked). An upstream that cannot be reached is a 502.
/// Keeps a client's connection alive unless the client asks to close it, or a fault
/// breaks it.
/// Rules: a fault by request number wins over `fail_from`, which wins over the matching
/// rules; those are tried in the order they were added, each used up after its `times`.
/// Every member may be called from any thread (the state is behind a mutex); the
/// destructor stops the proxy and closes every connection.
class fault_proxy {
public:
    /// Listens on a free port; throws std::runtime_error when the TLS files cannot be loaded.
    explicit fault_proxy(proxy_options options);
    ~fault_proxy();
    fault_proxy(fault_proxy const&) = delete;
    fault_proxy& operator=(fault_proxy const&) = delete;

    /// Applies `f` to the n-th request the proxy reads (from 1, over all connections).
    void fail_request(std::size_t n, fault f);
    /// Applies `f` to every request from the n-th on (0: none; the default).
    void fail_from(std::size_t n, fault f);
    /// Applies `f` to the next `times` requests whose method is `method` ("" for any) and
    /// whose target (path and query, as sent: S3 keys URI-encoded) contains `target_part`.
    void fail_matching(std::string method, std::string target_part, fault f, std::size_t times = 1);
    /// Drops every rule not used yet.
    void clear_faults();

    std::vector<recorded_request> requests() const;
    /// Requests recorded with `method` ("" for any) and `target_part` in their target.
    std::size_t count(std::string_view method, std::string_view target_part) const;
    std::size_t connections() const; ///< connections accepted so far (TLS ones before the handshake)
    std::uint16_t port() const { return port_; }
    /// "http://127.0.0.1:PORT/", or "https://localhost:PORT/" in front of TLS.
    std::string url() const;
    /// url() without its trailing slash: an S3 endpoint.
    std::string endpoint() const;

private:
    struct rule {
        std::string method, target_part;
        fault f;
        std::size_t times = 0;
    };
    awaitable<void> accept_loop();
    awaitable<void> handle(net::ip::tcp::socket socket, std::size_t connection);
    template <class Stream>
    awaitable<void> serve(Stream& stream, std::size_t connection);
    /// Records a request; returns its index in requests_ and its fault.
    std::pair<std::size_t, fault> record(recorded_request seen);
    void answered(std::size_t index, unsigned status);

    proxy_options options_;
    mutable std::mutex mutex_; // the test's thread and the proxy's thread share what follows
    std::map<std::size_t, fault> by_number_;
    std::size_t from_ = 0;
    fault from_fault_;
    std::vector<rule> rules_;
    std::vector<recorded_request> requests_;
    std::size_t connections_ = 0;

    std::unique_ptr<net::ssl::context> tls_; // set for HTTPS in front
    net::io_context io_{1};
    net::ip::tcp::acceptor acceptor_{io_};
    std::uint16_t port_ = 0;
    std::thread thread_; // last: started once everything above exists
};

} // namespace mirror::test
