#pragma once
// An HTTP/1.1 client over Boost.Beast: TLS 1.2+ verified against the system's roots (or a
// CA bundle) with host name checks and SNI, keep-alive connections pooled per host, a
// deadline on every step, redirects followed with care, transient failures retried with
// backoff and jitter, and bodies streamed with their length checked.

#include "core/http/status.hpp"
#include "core/http/url.hpp"
#include "core/io/net.hpp"
#include "core/io/memory_budget.hpp"
#include "core/io/request_observer.hpp"
#include "core/io/byte_sink.hpp"
#include "verify/error.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mirror::io {
class blocking_pool;
}

namespace mirror::http {

struct client_settings {
    std::string user_agent = "fdl-mirror";
    /// PEM roots to trust instead of the system's (OpenSSL's default paths, which honour
    /// SSL_CERT_FILE and SSL_CERT_DIR).
    std::optional<std::filesystem::path> ca_bundle;
    std::chrono::milliseconds connect_timeout{10'000};   ///< resolve and connect
    std::chrono::milliseconds handshake_timeout{10'000}; ///< TLS
    std::chrono::milliseconds header_timeout{30'000};    ///< send the request, receive the head
    std::chrono::milliseconds body_idle_timeout{30'000}; ///< longest wait for the next body bytes
    /// A body must arrive at this average rate, after a grace of body_grace: each attempt's
    /// deadline is body_grace + Content-Length / min_body_rate (without a Content-Length,
    /// body_grace + the bytes received so far / min_body_rate), so that a body dripping in
    /// byte by byte cannot hold a pass for ever. A cut attempt is resumed, as any other.
    std::uint64_t min_body_rate = 16 * 1024; ///< bytes a second
    std::chrono::milliseconds body_grace{30'000};
    std::size_t max_idle_per_host = 8;                   ///< keep-alive connections kept per host
    unsigned max_redirects = 5;
    /// Hosts ("host" or "host:port") besides the request's own that a redirect may lead to
    /// (decide_redirect, core/http/redirects.hpp); only their public addresses, unless the
    /// origin itself answered from an internal one.
    std::vector<std::string> redirect_hosts;
    unsigned max_attempts = 5; ///< tries of one request, transient failures included
    std::chrono::milliseconds backoff_base{250};
    std::chrono::milliseconds backoff_cap{20'000};
    std::chrono::seconds retry_after_cap{120}; ///< the longest Retry-After honoured
    /// Answers with another status (a 400) that the server's protocol calls transient, to
    /// retry like a 5xx: S3's RequestTimeout, and a body damaged in transit
    /// (XAmzContentSHA256Mismatch, BadDigest), which the server did not store. Set by the
    /// S3 store; a plain function of the status and the error body.
    bool (*transient_answer)(unsigned status, std::string_view error_body) = nullptr;
    /// Told of every exchange (each attempt, redirect and resumed read) when set; see
    /// client::exchange.
    std::shared_ptr<io::request_observer> observer;
    /// The process's memory budget, when there is one: a body's read buffers past
    /// small_read_chunk are granted from it (see run_exchange), so that many transfers at
    /// once stay inside it. Must outlive the client.
    io::memory_budget* memory = nullptr;
    /// Threads that receive large bodies over plain HTTP (pool_receive.hpp), so that the
    /// copies out of the kernel spread over the cores; on the I/O thread when null. Must
    /// outlive the client.
    io::blocking_pool* receive_pool = nullptr;
    /// The smallest body received on receive_pool: below it, a trip to the pool costs more
    /// than the copy it moves (0 sends every body there, as tests do).
    std::uint64_t receive_on_pool_from = 1024 * 1024;
};

/// What a body is read in when the budget has no room for full-size buffers (and for
/// bodies this small in any case): kept outside the budget, as the floor every transfer
/// needs to make progress.
inline constexpr std::size_t small_read_chunk = 64 * 1024;

struct request {
    std::string method = "GET";
    location where;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    bool follow_redirects = true;
    /// Connect only to public addresses of the host (is_internal_address): set by fetch for
    /// a redirect to another host, so that a public origin cannot send the client inward.
    bool public_addresses_only = false;
};

struct response_head {
    unsigned status = 0;
    std::vector<std::pair<std::string, std::string>> headers; ///< names in lower case
    std::optional<std::uint64_t> content_length;
    location where;         ///< where the answer came from, after redirects
    bool internal_peer = false; ///< it came from an internal address (loopback, private…)
    std::string error_body; ///< the start of a non-2xx answer's body (S3 puts its <Code> there)

    std::optional<std::string> header(std::string_view lower_case_name) const;
};

class client {
public:
    explicit client(client_settings settings);
    ~client();
    /// Why TLS cannot be used (the CA bundle could not be loaded), when it cannot; every
    /// https:// request then fails with this error. Stores check it when they open.
    std::optional<error> tls_setup_failure() const;
    client(client const&) = delete;
    client& operator=(client const&) = delete;

    client_settings const& settings() const;

    /// One exchange, no retry and no redirect: sends `req` on a pooled or new connection
    /// and reads the head; for a 2xx answer to anything but HEAD, streams the body into
    /// `body` (when given), failing if it is shorter or longer than its Content-Length.
    /// Transport failures are store_errc::transient (timeouts say which step), a TLS
    /// certificate that does not verify store_errc::rejected. The status is returned,
    /// not judged: see status_error. `seen`, when given, receives the head as soon as it
    /// is read, before the body streams. The settings' observer hears of it once, at its
    /// end (a pooled connection found closed and replaced is not a second exchange).
    awaitable<result<response_head>> exchange(request const& req, io::byte_sink* body,
                                              response_head* seen = nullptr);

    /// exchange, following redirects as decide_redirect allows (up to max_redirects) and
    /// retrying transient failures and statuses (429, 5xx) with exponential backoff and
    /// full jitter, honouring Retry-After. A body cut off after some bytes is resumed
    /// with a Range request pinned to its ETag. Returns 2xx, 304 and other final
    /// answers as they are; an error once retries are spent.
    awaitable<result<response_head>> fetch(request req, io::byte_sink* body);

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

} // namespace mirror::http
