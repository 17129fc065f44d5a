#include "core/s3/sigv4.hpp"
#include <doctest/doctest.h>

#include "verify/sha256.hpp"

#include <chrono>
#include <stdexcept>
#include <string>

using namespace mirror::s3;

namespace {

// The four examples of the S3 API reference, "Signature Calculations for the
// Authorization Header: Transferring Payload in a Single Chunk (AWS Signature Version
// 4)", section "Examples: Signature Calculations"
// (https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html):
// every expected string below is copied from that page. The page writes the
// Authorization value with "," alone between its parts; we send ", " as the AWS SDKs do,
// so the expected values join the page's parts with ", ".
credentials const aws_example{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", {}};
constexpr char const* aws_date = "20130524T000000Z";
constexpr char const* aws_host = "examplebucket.s3.amazonaws.com";
constexpr char const* empty_sha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

signing_request aws_request(std::string method, std::string path) {
    return {std::move(method), aws_host, std::move(path), {}, {}, empty_sha256};
}

std::string header(signed_headers const& s, std::string const& name) {
    for (auto const& [n, v] : s.headers)
        if (n == name)
            return v;
    return "(absent)";
}

std::string signature_of(signed_headers const& s) {
    auto const auth = header(s, "Authorization");
    return auth.substr(auth.rfind('=') + 1);
}

} // namespace

TEST_CASE("sigv4 reproduces AWS's S3 example: GET Object with a Range") {
    auto request = aws_request("GET", "/test.txt");
    request.headers = {{"Range", "bytes=0-9"}};
    auto const s = sign(request, aws_example, "us-east-1", "s3", aws_date);
    CHECK(s.canonical_request == "GET\n"
                                 "/test.txt\n"
                                 "\n"
                                 "host:examplebucket.s3.amazonaws.com\n"
                                 "range:bytes=0-9\n"
                                 "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
                                 "x-amz-date:20130524T000000Z\n"
                                 "\n"
                                 "host;range;x-amz-content-sha256;x-amz-date\n"
                                 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(s.string_to_sign == "AWS4-HMAC-SHA256\n"
                              "20130524T000000Z\n"
                              "20130524/us-east-1/s3/aws4_request\n"
                              "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
    CHECK(header(s, "Authorization") ==
          "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
          "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
          "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
    CHECK(header(s, "x-amz-date") == "20130524T000000Z");
    CHECK(header(s, "x-amz-content-sha256") == empty_sha256);
    CHECK(s.headers.size() == 3);
}

TEST_CASE("sigv4 reproduces AWS's S3 example: PUT Object with a storage class and a Date") {
    // The payload is "Welcome to Amazon S3."; the page gives its hash.
    auto const payload = mirror::verify::to_hex(mirror::verify::sha256_of("Welcome to Amazon S3."));
    REQUIRE(payload == "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
    REQUIRE(uri_encode("/test$file.text", true) == "/test%24file.text");
    auto request = aws_request("PUT", "/test%24file.text");
    request.payload_sha256_hex = payload;
    request.headers = {{"Date", "Fri, 24 May 2013 00:00:00 GMT"},
                       {"x-amz-storage-class", "REDUCED_REDUNDANCY"}};
    auto const s = sign(request, aws_example, "us-east-1", "s3", aws_date);
    CHECK(s.canonical_request == "PUT\n"
                                 "/test%24file.text\n"
                                 "\n"
                                 "date:Fri, 24 May 2013 00:00:00 GMT\n"
                                 "host:examplebucket.s3.amazonaws.com\n"
                                 "x-amz-content-sha256:44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072\n"
                                 "x-amz-date:20130524T000000Z\n"
                                 "x-amz-storage-class:REDUCED_REDUNDANCY\n"
                                 "\n"
                                 "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class\n"
                                 "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
    CHECK(s.string_to_sign == "AWS4-HMAC-SHA256\n"
                              "20130524T000000Z\n"
                              "20130524/us-east-1/s3/aws4_request\n"
                              "9e0e90d9c76de8fa5b200d8c849cd5b8dc7a3be3951ddb7f6a76b4158342019d");
    CHECK(header(s, "Authorization") ==
          "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
          "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, "
          "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
    CHECK(header(s, "x-amz-content-sha256") == payload);
}

TEST_CASE("sigv4 reproduces AWS's S3 example: GET Bucket lifecycle, a name without a value") {
    auto request = aws_request("GET", "/");
    request.query = {{"lifecycle", ""}};
    auto const s = sign(request, aws_example, "us-east-1", "s3", aws_date);
    CHECK(s.canonical_request == "GET\n"
                                 "/\n"
                                 "lifecycle=\n"
                                 "host:examplebucket.s3.amazonaws.com\n"
                                 "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
                                 "x-amz-date:20130524T000000Z\n"
                                 "\n"
                                 "host;x-amz-content-sha256;x-amz-date\n"
                                 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(s.string_to_sign == "AWS4-HMAC-SHA256\n"
                              "20130524T000000Z\n"
                              "20130524/us-east-1/s3/aws4_request\n"
                              "9766c798316ff2757b517bc739a67f6213b4ab36dd5da2f94eaebf79c77395ca");
    CHECK(header(s, "Authorization") ==
          "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
          "SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
          "Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
}

TEST_CASE("sigv4 reproduces AWS's S3 example: GET Bucket list objects, the query sorted") {
    auto request = aws_request("GET", "/");
    request.query = {{"prefix", "J"}, {"max-keys", "2"}}; // out of order on purpose
    auto const s = sign(request, aws_example, "us-east-1", "s3", aws_date);
    CHECK(s.canonical_request == "GET\n"
                                 "/\n"
                                 "max-keys=2&prefix=J\n"
                                 "host:examplebucket.s3.amazonaws.com\n"
                                 "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
                                 "x-amz-date:20130524T000000Z\n"
                                 "\n"
                                 "host;x-amz-content-sha256;x-amz-date\n"
                                 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(s.string_to_sign == "AWS4-HMAC-SHA256\n"
                              "20130524T000000Z\n"
                              "20130524/us-east-1/s3/aws4_request\n"
                              "df57d21db20da04d7fa30298dd4488ba3a2b47ca3a489c74750e0f1e7df1b9b7");
    CHECK(header(s, "Authorization") ==
          "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
          "SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
          "Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

TEST_CASE("sigv4 uri_encode keeps only the unreserved characters, and '/' when asked") {
    CHECK(uri_encode("AZaz09-_.~", false) == "AZaz09-_.~");
    CHECK(uri_encode("a b+c=d&e", false) == "a%20b%2Bc%3Dd%26e");
    CHECK(uri_encode("dir/sub/file", true) == "dir/sub/file");
    CHECK(uri_encode("dir/sub/file", false) == "dir%2Fsub%2Ffile");
    CHECK(uri_encode("\xC3\xA9\xE2\x82\xAC", true) == "%C3%A9%E2%82%AC"); // "é€", UTF-8
    CHECK(uri_encode("%2f*!'()", true) == "%252f%2A%21%27%28%29");
    CHECK(uri_encode(std::string_view("\0\xff", 2), true) == "%00%FF");
    CHECK(uri_encode("", true).empty());
    for (int byte = 0; byte < 256; ++byte) {
        CAPTURE(byte);
        char const c = char(byte);
        bool const kept = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                          c == '-' || c == '_' || c == '.' || c == '~';
        CHECK(uri_encode(std::string_view(&c, 1), false).size() == (kept ? 1u : 3u));
    }
}

TEST_CASE("sigv4 amz_date_of formats UTC and drops fractions of a second") {
    using namespace std::chrono;
    CHECK(amz_date_of(system_clock::time_point{}) == "19700101T000000Z");
    CHECK(amz_date_of(sys_days{2013y / May / 24}) == "20130524T000000Z");
    CHECK(amz_date_of(sys_days{2024y / February / 29} + 23h + 59min + 59s + 999ms) ==
          "20240229T235959Z");
    CHECK(amz_date_of(sys_days{2031y / December / 31} + 1h + 2min + 3s) == "20311231T010203Z");
}

TEST_CASE("sigv4 canonical headers: lower-cased, trimmed, runs of spaces collapsed, repeats joined") {
    auto request = aws_request("GET", "/k");
    request.headers = {{"X-Amz-Meta-B", "  two   words\there  "},
                       {"Content-Type", "text/plain"},
                       {"x-amz-meta-a", "1"},
                       {"X-AMZ-META-A", "2"}};
    auto const s = sign(request, aws_example, "us-east-1", "s3", aws_date);
    CHECK(s.canonical_request == std::string("GET\n/k\n\n"
                                             "content-type:text/plain\n"
                                             "host:examplebucket.s3.amazonaws.com\n"
                                             "x-amz-content-sha256:") +
                                     empty_sha256 +
                                     "\n"
                                     "x-amz-date:20130524T000000Z\n"
                                     "x-amz-meta-a:1,2\n"
                                     "x-amz-meta-b:two words here\n"
                                     "\n"
                                     "content-type;host;x-amz-content-sha256;x-amz-date;x-amz-meta-a;x-amz-meta-b\n" +
                                     empty_sha256);
}

TEST_CASE("sigv4 query: encoded, then sorted by encoded name and value") {
    auto request = aws_request("GET", "/");
    request.query = {{"b", "2"}, {"a", "x y"}, {"a", "1"}, {"c/d", "e+f=g"}, {"empty", ""}};
    auto const s = sign(request, aws_example, "us-east-1", "s3", aws_date);
    CHECK(s.canonical_request.starts_with("GET\n/\na=1&a=x%20y&b=2&c%2Fd=e%2Bf%3Dg&empty=\nhost:"));
}

TEST_CASE("sigv4 signs and sends a session token") {
    credentials temporary = aws_example;
    temporary.session_token = "FQoGZXIvYXdzE token/with+chars==";
    auto const s = sign(aws_request("GET", "/k"), temporary, "us-east-1", "s3", aws_date);
    REQUIRE(s.headers.size() == 4);
    CHECK(s.headers[3].first == "x-amz-security-token");
    CHECK(s.headers[3].second == "FQoGZXIvYXdzE token/with+chars==");
    CHECK(s.canonical_request.find("\nx-amz-security-token:FQoGZXIvYXdzE token/with+chars==\n\n"
                                   "host;x-amz-content-sha256;x-amz-date;x-amz-security-token\n") !=
          std::string::npos);
}

TEST_CASE("sigv4 leaves an s3 path as it is and encodes it again for other services") {
    auto const request = aws_request("GET", "/a%20b/c~d");
    auto const s3 = sign(request, aws_example, "us-east-1", "s3", aws_date);
    CHECK(s3.canonical_request.starts_with("GET\n/a%20b/c~d\n\n"));
    auto const other = sign(request, aws_example, "us-east-1", "execute-api", aws_date);
    CHECK(other.canonical_request.starts_with("GET\n/a%2520b/c~d\n\n"));
    CHECK(other.string_to_sign.find("\n20130524/us-east-1/execute-api/aws4_request\n") != std::string::npos);
}

TEST_CASE("sigv4 signature changes with every signed input") {
    auto base = aws_request("GET", "/test.txt");
    base.headers = {{"Range", "bytes=0-9"}};
    auto const reference = signature_of(sign(base, aws_example, "us-east-1", "s3", aws_date));
    auto differs = [&](signing_request const& r, credentials const& c = aws_example,
                       std::string const& region = "us-east-1", std::string const& date = aws_date) {
        return signature_of(sign(r, c, region, "s3", date)) != reference;
    };
    auto r = base;
    r.method = "HEAD";
    CHECK(differs(r));
    r = base;
    r.host = "otherbucket.s3.amazonaws.com";
    CHECK(differs(r));
    r = base;
    r.path = "/test.txT";
    CHECK(differs(r));
    r = base;
    r.query = {{"versionId", "1"}};
    CHECK(differs(r));
    r = base;
    r.headers = {{"Range", "bytes=0-8"}};
    CHECK(differs(r));
    r = base;
    r.payload_sha256_hex = "UNSIGNED-PAYLOAD";
    CHECK(differs(r));
    credentials other_secret = aws_example;
    other_secret.secret_access_key.back() = 'X';
    CHECK(differs(base, other_secret));
    CHECK(differs(base, aws_example, "eu-west-1"));
    CHECK(differs(base, aws_example, "us-east-1", "20130524T000001Z"));
    CHECK(differs(base, aws_example, "us-east-1", "20130525T000000Z"));
}

TEST_CASE("sigv4 refuses malformed input as a caller bug") {
    auto const ok = aws_request("GET", "/k");
    CHECK_NOTHROW(sign(ok, aws_example, "us-east-1", "s3", aws_date));
    for (char const* date : {"20130524T000000", "2013-05-24T00:00:00Z", "20130524 000000Z", ""}) {
        CAPTURE(date);
        CHECK_THROWS_AS(sign(ok, aws_example, "us-east-1", "s3", date), std::invalid_argument);
    }
    for (char const* path : {"", "k", "/a b", "/a%2", "/a%2f", "/a+b", "/caf\xC3\xA9"}) {
        CAPTURE(path);
        auto r = ok;
        r.path = path;
        CHECK_THROWS_AS(sign(r, aws_example, "us-east-1", "s3", aws_date), std::invalid_argument);
    }
    for (char const* name : {"Host", "authorization", "X-Amz-Date", "x-amz-content-sha256",
                             "X-Amz-Security-Token", "", "bad name", "colon:"}) {
        CAPTURE(name);
        auto r = ok;
        r.headers = {{name, "v"}};
        CHECK_THROWS_AS(sign(r, aws_example, "us-east-1", "s3", aws_date), std::invalid_argument);
    }
    auto r = ok;
    r.headers = {{"x-amz-meta-a", "line\r\nInjected: 1"}};
    CHECK_THROWS_AS(sign(r, aws_example, "us-east-1", "s3", aws_date), std::invalid_argument);
    for (char const* payload : {"", "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855",
                                "unsigned-payload", "e3b0 c442"}) {
        CAPTURE(payload);
        r = ok;
        r.payload_sha256_hex = payload;
        CHECK_THROWS_AS(sign(r, aws_example, "us-east-1", "s3", aws_date), std::invalid_argument);
    }
    r = ok;
    r.method = "GET /";
    CHECK_THROWS_AS(sign(r, aws_example, "us-east-1", "s3", aws_date), std::invalid_argument);
}
