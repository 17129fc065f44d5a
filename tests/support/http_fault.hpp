#pragma once
// What the loopback fault injectors share: fault_http_server (an origin of its own) and
// fault_proxy (in front of a real nginx or s3rver). The faults and their constructors,
// the record of a request, and a response head written byte by byte.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mirror::test {

using header_list = std::vector<std::pair<std::string, std::string>>;

/// What to do to one response. The default serves it normally.
struct fault {
    enum class action {
        none,
        close_before_headers, ///< read the request, then close without a byte
        short_body,           ///< headers, then half the body, then close (FIN)
        long_body,            ///< headers, the body, then excess bytes past its Content-Length
        stall_before_headers, ///< wait `stall`, then respond
        stall_mid_body,       ///< headers and half the body, wait `stall`, then the rest
        drip_body,            ///< headers, then the body one byte every `stall` (a slow drip)
        reset_mid_body,       ///< headers, then half the body, then a TCP reset (RST)
        padded_body,          ///< a Content-Length 16 bytes too large, and 16 junk bytes after the body
        lose_answer,          ///< do the request's work (fault_proxy: forward it), then reset
                              ///< without a byte: the client cannot tell whether it happened
        corrupt_request_body, ///< fault_proxy only: forward the request with one bit of its
                              ///< body flipped (in transit), and relay the server's answer
        interim_first,        ///< 100 Continue and 103 Early Hints before the answer (legal
                              ///< interim answers, RFC 9110, section 15.2)
        head_then_body,       ///< the head in one write, the body in another, as Ceph RGW
                              ///< writes them: with Nagle's algorithm on (the server's
                              ///< default) the body waits until the head is acknowledged
    };
    action what = action::none;
    unsigned status = 0; ///< when not 0: this status and `body`, not the object (nothing forwarded)
    header_list headers; ///< added to the response (Retry-After, Location…)
    std::chrono::milliseconds stall{0};
    std::string body; ///< with `status`: the body; empty for "injected NNN\n"
};

fault respond_with(unsigned status, header_list headers = {});   ///< 429, 500, 503, 403, 404…
fault redirect_to(unsigned status, std::string location);        ///< 301, 302, 307, 308
fault close_before_headers();
fault short_body();
fault long_body();
fault stall_before_headers(std::chrono::milliseconds how_long);
fault stall_mid_body(std::chrono::milliseconds how_long);
fault drip_body(std::chrono::milliseconds per_byte);
fault reset_mid_body();
fault padded_body();
fault corrupt_request_body();
fault lose_answer();
fault head_then_body();
fault interim_first();
/// `status` with an S3 error document: <Error><Code>CODE</Code><Message>…</Message></Error>.
fault s3_error(unsigned status, std::string code, header_list headers = {});

/// One request as the server or proxy read it.
struct recorded_request {
    std::string method, target;
    header_list headers;
    std::size_t connection = 0; ///< which accepted connection carried it, from 1
    unsigned status = 0;        ///< fault_proxy: the status sent back; 0 when none was
    /// The value of a header (case-insensitive name), "" when absent.
    std::string header(std::string_view name) const;
};

/// A response as it will go out: `headers` without Content-Length (see render_head).
struct raw_response {
    unsigned status = 200;
    header_list headers;
    std::string body;
    /// The Content-Length to announce: of the body a GET would get, for HEAD too; none
    /// for a 304, or a HEAD answered without one.
    std::optional<std::uint64_t> length;
    bool send_body = true; ///< false for HEAD, 204 and 304
    bool keep_alive = true;
};

/// "HTTP/1.1 STATUS REASON", Content-Length `declared` (when set), the headers, and
/// "Connection: close" unless keep_alive, then the empty line.
std::string render_head(raw_response const& out, std::optional<std::uint64_t> declared);

/// Bytes no real body ends with, for long_body and padded_body.
inline constexpr std::string_view excess_bytes = "EXCESS BYTES AFTER THE BODY\r\n";
inline constexpr std::string_view padding_bytes = "PADDING16BYTES!!";

} // namespace mirror::test
