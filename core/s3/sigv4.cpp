#include "core/s3/sigv4.hpp"

#include "verify/sha256.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <new>
#include <openssl/evp.h>
#include <span>
#include <stdexcept>

namespace mirror::s3 {

// The one algorithm this signer speaks; also the Authorization scheme name.
static constexpr std::string_view algorithm = "AWS4-HMAC-SHA256";

using mac = std::array<unsigned char, 32>;

static bool is_unreserved(unsigned char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_' || c == '.' || c == '~';
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_upper_hex(char c) { return is_digit(c) || (c >= 'A' && c <= 'F'); }
static bool is_lower_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f'); }

// RFC 9110 section 5.6.2 "tchar": what a header field name may be made of.
static bool is_token_char(unsigned char c) {
    return is_unreserved(c) || std::string_view("!#$%&'*+^`|").find(char(c)) != std::string_view::npos;
}

// What Python's str.split() (botocore's Trimall) treats as white space, in ASCII.
static bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static bool has_line_break_or_nul(std::string_view text) {
    return text.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos;
}

static void require(bool ok, char const* what) {
    if (!ok)
        throw std::invalid_argument(what);
}

static std::string to_lower(std::string_view text) {
    std::string out(text);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z')
            c = char(c - 'A' + 'a');
    return out;
}

// SigV4's Trimall: no white space at either end, and each inner run made one space.
static std::string trim_all(std::string_view value) {
    std::string out;
    bool pending_space = false;
    for (char c : value) {
        if (is_space(c)) {
            pending_space = !out.empty();
            continue;
        }
        if (pending_space)
            out.push_back(' ');
        pending_space = false;
        out.push_back(c);
    }
    return out;
}

static bool well_formed_amz_date(std::string_view text) {
    if (text.size() != 16 || text[8] != 'T' || text[15] != 'Z')
        return false;
    for (std::size_t i : {0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14})
        if (!is_digit(text[i]))
            return false;
    return true;
}

// An already-encoded absolute path: unreserved, '/', or "%XX" in upper-case hex.
static bool well_formed_path(std::string_view path) {
    if (path.empty() || path.front() != '/')
        return false;
    for (std::size_t i = 0; i < path.size(); ++i) {
        char const c = path[i];
        if (c == '%') {
            if (i + 2 >= path.size() || !is_upper_hex(path[i + 1]) || !is_upper_hex(path[i + 2]))
                return false;
            i += 2;
        } else if (c != '/' && !is_unreserved(static_cast<unsigned char>(c))) {
            return false;
        }
    }
    return true;
}

// 64 lower-case hex digits, or an upper-case hyphenated literal like UNSIGNED-PAYLOAD or
// STREAMING-AWS4-HMAC-SHA256-PAYLOAD (the chunked forms a later uploader may use). The
// hyphen keeps an upper-case hex digest, which S3 would refuse, from passing as a literal.
static bool well_formed_payload_hash(std::string_view text) {
    if (text.size() == 64 && std::all_of(text.begin(), text.end(), is_lower_hex))
        return true;
    return text.find('-') != std::string_view::npos &&
           std::all_of(text.begin(), text.end(),
                       [](char c) { return (c >= 'A' && c <= 'Z') || is_digit(c) || c == '-'; });
}

static mac hmac_sha256(std::span<unsigned char const> key, std::string_view data) {
    return verify::hmac_sha256(key, data);
}

static std::string hex_of(mac const& digest) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string text;
    text.reserve(2 * digest.size());
    for (unsigned char byte : digest) {
        text.push_back(digits[byte >> 4]);
        text.push_back(digits[byte & 0x0f]);
    }
    return text;
}

// kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request")
static mac signing_key(std::string_view secret, std::string_view date, std::string_view region,
                       std::string_view service) {
    std::string const seed = "AWS4" + std::string(secret);
    auto const* seed_bytes = reinterpret_cast<unsigned char const*>(seed.data());
    mac key = hmac_sha256({seed_bytes, seed.size()}, date);
    key = hmac_sha256(key, region);
    key = hmac_sha256(key, service);
    return hmac_sha256(key, "aws4_request");
}

// S3 signs the path as sent; every other service signs it URI-encoded once more
// (the "double encoding" of the SigV4 spec, which S3 alone leaves out).
static std::string canonical_uri(std::string const& path, std::string const& service) {
    return service == "s3" ? path : uri_encode(path, /*keep_slash=*/true);
}

// Encoded name=value pairs sorted by encoded name, then by encoded value.
static std::string canonical_query(std::vector<std::pair<std::string, std::string>> const& query) {
    std::vector<std::pair<std::string, std::string>> encoded;
    encoded.reserve(query.size());
    for (auto const& [name, value] : query)
        encoded.emplace_back(uri_encode(name, false), uri_encode(value, false));
    std::sort(encoded.begin(), encoded.end());
    std::string out;
    for (auto const& [name, value] : encoded) {
        if (!out.empty())
            out.push_back('&');
        out += name + '=' + value;
    }
    return out;
}

struct header_block {
    std::string canonical; // "name:value\n" per header, sorted by name
    std::string signed_names; // "name;name;…"
};

static header_block canonical_headers(std::vector<std::pair<std::string, std::string>> headers) {
    // Stable, so a repeated header keeps its values in the order they are sent.
    std::stable_sort(headers.begin(), headers.end(),
                     [](auto const& a, auto const& b) { return a.first < b.first; });
    header_block out;
    for (std::size_t i = 0; i < headers.size(); ++i) {
        bool const repeat = i > 0 && headers[i].first == headers[i - 1].first;
        if (repeat) {
            out.canonical.back() = ','; // replaces the previous value's '\n'
        } else {
            out.canonical += headers[i].first + ':';
            out.signed_names += (out.signed_names.empty() ? "" : ";") + headers[i].first;
        }
        out.canonical += headers[i].second + '\n';
    }
    return out;
}

static void check_request(signing_request const& request, credentials const& creds,
                          std::string const& amz_date) {
    auto const is_token = [](std::string_view text) {
        return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
            return is_token_char(static_cast<unsigned char>(c));
        });
    };
    require(is_token(request.method), "sigv4: method is not an HTTP token");
    require(well_formed_amz_date(amz_date), "sigv4: amz_date is not YYYYMMDDTHHMMSSZ");
    require(well_formed_path(request.path),
            "sigv4: path is not an absolute path encoded with uri_encode(…, true)");
    require(well_formed_payload_hash(request.payload_sha256_hex),
            "sigv4: payload_sha256_hex is neither 64 lower-case hex digits nor a literal");
    require(!request.host.empty() && !has_line_break_or_nul(request.host),
            "sigv4: host is empty or holds CR, LF or NUL");
    require(!creds.session_token || !has_line_break_or_nul(*creds.session_token),
            "sigv4: session token holds CR, LF or NUL");
    static constexpr std::string_view owned[] = {"host", "authorization", "x-amz-date",
                                                 "x-amz-content-sha256", "x-amz-security-token"};
    for (auto const& [name, value] : request.headers) {
        require(is_token(name), "sigv4: a header name is not an HTTP token");
        require(std::find(std::begin(owned), std::end(owned), to_lower(name)) == std::end(owned),
                "sigv4: a header the signer sets itself is among the extra headers");
        require(!has_line_break_or_nul(value), "sigv4: a header value holds CR, LF or NUL");
    }
}

signed_headers sign(signing_request const& request, credentials const& creds,
                    std::string const& region, std::string const& service,
                    std::string const& amz_date) {
    check_request(request, creds, amz_date);

    std::vector<std::pair<std::string, std::string>> to_sign{
        {"host", trim_all(request.host)},
        {"x-amz-content-sha256", request.payload_sha256_hex},
        {"x-amz-date", amz_date},
    };
    if (creds.session_token)
        to_sign.emplace_back("x-amz-security-token", trim_all(*creds.session_token));
    for (auto const& [name, value] : request.headers)
        to_sign.emplace_back(to_lower(name), trim_all(value));
    header_block const block = canonical_headers(std::move(to_sign));

    signed_headers out;
    out.canonical_request = request.method + '\n' + canonical_uri(request.path, service) + '\n' +
                            canonical_query(request.query) + '\n' + block.canonical + '\n' +
                            block.signed_names + '\n' + request.payload_sha256_hex;

    std::string const date = amz_date.substr(0, 8);
    std::string const scope = date + '/' + region + '/' + service + "/aws4_request";
    out.string_to_sign = std::string(algorithm) + '\n' + amz_date + '\n' + scope + '\n' +
                         verify::to_hex(verify::sha256_of(out.canonical_request));

    std::string const signature =
        hex_of(hmac_sha256(signing_key(creds.secret_access_key, date, region, service),
                           out.string_to_sign));
    out.headers.emplace_back("Authorization", std::string(algorithm) + " Credential=" +
                                                  creds.access_key_id + '/' + scope +
                                                  ", SignedHeaders=" + block.signed_names +
                                                  ", Signature=" + signature);
    out.headers.emplace_back("x-amz-date", amz_date);
    out.headers.emplace_back("x-amz-content-sha256", request.payload_sha256_hex);
    if (creds.session_token)
        out.headers.emplace_back("x-amz-security-token", *creds.session_token);
    return out;
}

std::string uri_encode(std::string_view text, bool keep_slash) {
    static constexpr char digits[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        auto const byte = static_cast<unsigned char>(c);
        if (is_unreserved(byte) || (keep_slash && c == '/')) {
            out.push_back(c);
        } else {
            out.push_back('%');
            out.push_back(digits[byte >> 4]);
            out.push_back(digits[byte & 0x0f]);
        }
    }
    return out;
}

std::string amz_date_of(std::chrono::system_clock::time_point t) {
    using namespace std::chrono;
    auto const seconds = floor<std::chrono::seconds>(t);
    auto const day = floor<days>(seconds);
    year_month_day const date{day};
    hh_mm_ss const time{seconds - day};
    char text[32];
    std::snprintf(text, sizeof text, "%04d%02u%02uT%02d%02d%02dZ", int(date.year()),
                  unsigned(date.month()), unsigned(date.day()), int(time.hours().count()),
                  int(time.minutes().count()), int(time.seconds().count()));
    return text;
}

} // namespace mirror::s3
