#pragma once
// AWS Signature Version 4 for the Authorization header (a single-chunk payload): the
// pure signer, no network. Spec: S3 API reference, "Signature Calculations for the
// Authorization Header: Transferring Payload in a Single Chunk (AWS Signature Version 4)"
// (https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html).

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mirror::s3 {

/// Long-term (access key id and secret) or temporary (plus a session token) credentials.
struct credentials {
    std::string access_key_id, secret_access_key;
    std::optional<std::string> session_token; ///< sent and signed as x-amz-security-token
};

/// What is signed of one HTTP request.
struct signing_request {
    std::string method; ///< "GET", "PUT"…, as sent
    std::string host;   ///< exactly as sent in Host, with ":port" when not the default
    /// The absolute path exactly as sent on the request line, already URI-encoded the
    /// SigV4 way: `uri_encode(raw_path, /*keep_slash=*/true)`. Only unreserved
    /// characters, '/' and upper-case "%XX" may appear. For "s3" it is the canonical URI
    /// as it is (S3 does not double-encode); for other services it is encoded once more.
    std::string path;
    /// Decoded name/value pairs in any order; names may repeat, values may be empty.
    std::vector<std::pair<std::string, std::string>> query;
    /// Extra headers to sign and send (names in any case; a repeated name is signed as
    /// its values joined by ','). Must not name host, authorization, x-amz-date,
    /// x-amz-content-sha256 or x-amz-security-token: the signer owns those.
    std::vector<std::pair<std::string, std::string>> headers;
    /// 64 lower-case hex digits (SHA-256 of the body), or a literal such as
    /// "UNSIGNED-PAYLOAD". Sent as x-amz-content-sha256, which S3 requires.
    std::string payload_sha256_hex;
};

/// The headers to add to the request, and the intermediate strings (for logs and tests).
struct signed_headers {
    /// In this order: Authorization, x-amz-date, x-amz-content-sha256, and
    /// x-amz-security-token when the credentials carry a session token.
    std::vector<std::pair<std::string, std::string>> headers;
    std::string canonical_request, string_to_sign;
};

/// Signs `request` for `region` (e.g. "us-east-1") and `service` (e.g. "s3") at
/// `amz_date` ("YYYYMMDDTHHMMSSZ", UTC; see amz_date_of). Signs host, x-amz-date,
/// x-amz-content-sha256, x-amz-security-token (with a token) and every extra header.
/// The Authorization value is "AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…,
/// Signature=…" (the separators the AWS SDKs send).
/// Pure and thread-safe. Throws std::invalid_argument on a caller bug: a malformed
/// amz_date, path or payload hash, a header name that is not an HTTP token or is one the
/// signer owns, or CR, LF or NUL in a header value, host or token.
signed_headers sign(signing_request const& request, credentials const& creds,
                    std::string const& region, std::string const& service,
                    std::string const& amz_date);

/// RFC 3986 encoding as SigV4 wants it, byte by byte (UTF-8 stays UTF-8): unreserved
/// A-Z a-z 0-9 '-' '_' '.' '~' kept, every other byte "%XX" in upper-case hex; '/' kept
/// when `keep_slash` (object keys in paths), encoded otherwise (query names and values).
std::string uri_encode(std::string_view text, bool keep_slash);

/// "YYYYMMDDTHHMMSSZ" for `t` in UTC, fractions of a second dropped. Years 0 to 9999.
std::string amz_date_of(std::chrono::system_clock::time_point t);

} // namespace mirror::s3
