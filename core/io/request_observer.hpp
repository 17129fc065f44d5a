#pragma once
// What a network store tells about each HTTP exchange it makes: one event per request on
// the wire (every retry, redirect, resumed read, multipart part and listing page), so the
// daemon can count traffic without core knowing Prometheus (docs/development.md,
// "Layers"). The HTTP client reports them (http::client_settings::observer); folder
// stores make none.

#include <string_view>

namespace mirror::io {

/// Why an exchange failed on the wire, or what its status asks for. The client decides
/// once, from what it already classifies (the step that failed, the status); the words of
/// to_string() are stable (they are metric label values).
enum class request_failure {
    none,         ///< completed: answered, and the body (if any) read whole
    dns,          ///< the host name did not resolve
    connect,      ///< the TCP connection was refused or the host unreachable
    tls,          ///< no TLS: the handshake failed, the certificate did not verify, no usable roots
    timeout,      ///< a deadline passed (resolving, connecting, handshake, sending, the head, between
                  ///< body bytes), or the server answered 408
    reset,        ///< the connection was closed or reset before the answer's head
    truncated,    ///< the connection was closed or reset inside the body
    protocol,     ///< not HTTP/1.1 as it should be: a malformed answer, more bytes than its Content-Length
    throttled,    ///< answered 429, or 503 with S3's <Code>SlowDown</Code>
    server_error, ///< answered another 5xx
};

/// "" for none, else the enumerator's name ("dns", "server_error", …).
char const* to_string(request_failure failure) noexcept;

/// One exchange. The views are valid during the call only.
struct request_event {
    std::string_view method; ///< "GET", "HEAD", "PUT", "POST", "DELETE"
    unsigned status = 0;     ///< the answer's status (206, 304, 404… as sent); 0 when no head arrived
    /// none for an answer read whole, whatever its status (a 404 is an answer), except the
    /// statuses that ask to come back (408, 429, 5xx). A failure after the head keeps
    /// `status` and says what broke (truncated, timeout). A read the caller's sink stopped
    /// is not a failure of the exchange.
    request_failure failure = request_failure::none;
};

/// Told of every exchange of the stores it is given to. Called on the I/O thread, after
/// the exchange and before its result reaches the store; must not throw or block.
class request_observer {
public:
    virtual ~request_observer();
    virtual void observe(request_event const& event) = 0;
};

} // namespace mirror::io
