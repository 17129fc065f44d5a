// Differential test: core/s3/sigv4 against botocore, the signer of the AWS CLI and boto3,
// run through botocore_sign.py (next to this file) with Debian's /usr/bin/python3 and
// the Debian package awscli (scripts/setup installs it). A missing python3 or botocore
// fails the test; it is never skipped.
#include "core/s3/sigv4.hpp"
#include <doctest/doctest.h>

#include "verify/sha256.hpp"

#include <boost/json.hpp>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <sys/wait.h>
#include <vector>

using namespace mirror::s3;
namespace json = boost::json;

namespace {

// The script's default credentials (ACCESS_KEY, SECRET_KEY in botocore_sign.py).
credentials const fixed{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", {}};
credentials const aws_example{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", {}};
constexpr char const* empty_sha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

using pairs = std::vector<std::pair<std::string, std::string>>;

struct probe {
    char const* name;
    std::string method, scheme, host, raw_path;
    pairs query, headers;
    std::string payload = empty_sha256;
    std::string amz_date = "20130524T000000Z";
    std::string region = "us-east-1";
    std::string service = "s3";
    credentials creds = fixed;
    std::string aws_signature = {}; // when the S3 reference page publishes the answer
};

std::vector<probe> probes() {
    std::string const hello = mirror::verify::to_hex(mirror::verify::sha256_of("hello"));
    return {
        {"a key with spaces", "PUT", "https", "s3.example.com", "/bucket/my file  name.txt", {},
         {{"Content-Type", "text/plain"}}, hello},
        {"a unicode key", "GET", "https", "s3.example.com",
         "/bucket/\xE6\x97\xA5\xE6\x9C\xAC/caf\xC3\xA9 \xE2\x82\xAC.parquet", {}, {}},
        {"'+', '=' and other reserved characters in the key and the query", "GET", "https",
         "s3.example.com", "/bucket/a+b=c&d;e:f@g,h$i'j(k)l*m!n%o~p", {{"prefix", "a+b=c"}, {"delimiter", "/"}},
         {}},
        {"a listing with several parameters, some empty", "GET", "https", "s3.example.com", "/bucket",
         {{"list-type", "2"}, {"prefix", ""}, {"continuation-token", "1/2+3=="},
          {"start-after", "x y\xC3\xA9"}, {"fetch-owner", ""}},
         {}},
        {"repeated query names", "GET", "https", "s3.example.com", "/bucket",
         {{"a", "2"}, {"a", "1"}, {"a", ""}, {"A", "0"}}, {}},
        {"extra headers with runs of spaces, mixed case and a repeat", "PUT", "https", "s3.example.com",
         "/bucket/obj",
         {},
         {{"X-Amz-Meta-Note", "  several   spaces\tand a tab "},
          {"If-None-Match", "*"},
          {"x-amz-checksum-sha256", "LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ="},
          {"X-Amz-Meta-Dup", "one"},
          {"x-amz-meta-dup", "two"}},
         hello},
        {"an unsigned payload to a host with a port", "GET", "http", "127.0.0.1:9000", "/bucket/key.bin",
         {}, {{"Range", "bytes=100-"}}, "UNSIGNED-PAYLOAD"},
        {"another region and time", "DELETE", "https", "s3.eu-central-1.amazonaws.com", "/bucket/old",
         {{"versionId", "3HL4kqtJvjVBH40Nrjfkd"}}, {}, empty_sha256, "20240229T235959Z", "eu-central-1"},
        {"another service, whose path is encoded twice", "GET", "https", "example.execute-api.amazonaws.com",
         "/stage/a b/c%d", {{"q", "1 2"}}, {}, empty_sha256, "20150830T123600Z", "us-east-1", "execute-api"},
        // Three of the reference page's examples (PUT is left out: botocore replaces a
        // Date header with its own), with the page's signatures.
        {"AWS's GET Object example", "GET", "https", "examplebucket.s3.amazonaws.com", "/test.txt", {},
         {{"Range", "bytes=0-9"}}, empty_sha256, "20130524T000000Z", "us-east-1", "s3", aws_example,
         "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"},
        {"AWS's GET Bucket lifecycle example", "GET", "https", "examplebucket.s3.amazonaws.com", "/",
         {{"lifecycle", ""}}, {}, empty_sha256, "20130524T000000Z", "us-east-1", "s3", aws_example,
         "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"},
        {"AWS's GET Bucket list objects example", "GET", "https", "examplebucket.s3.amazonaws.com", "/",
         {{"max-keys", "2"}, {"prefix", "J"}}, {}, empty_sha256, "20130524T000000Z", "us-east-1", "s3",
         aws_example, "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"},
    };
}

json::array to_json(pairs const& list) {
    json::array out;
    for (auto const& [name, value] : list)
        out.push_back(json::array{json::string(name), json::string(value)});
    return out;
}

json::object to_json(probe const& p) {
    json::object o{{"method", p.method},   {"scheme", p.scheme},     {"host", p.host},
                   {"raw_path", p.raw_path}, {"query", to_json(p.query)}, {"headers", to_json(p.headers)},
                   {"payload", p.payload}, {"amz_date", p.amz_date}, {"region", p.region},
                   {"service", p.service}, {"access_key", p.creds.access_key_id},
                   {"secret_key", p.creds.secret_access_key}};
    o["token"] = p.creds.session_token ? json::value(*p.creds.session_token) : json::value(nullptr);
    return o;
}

std::string shell_quote(std::string const& text) {
    std::string out = "'";
    for (char c : text)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

struct run_result {
    int status = -1;
    std::string output; // stdout and stderr
};

run_result run(std::string const& command) {
    run_result r;
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr)
        return r;
    char buffer[4096];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;)
        r.output.append(buffer, n);
    int const raw = ::pclose(pipe);
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    return r;
}

// botocore's answers, one object per probe, from the script's last output line.
json::array botocore_sign(std::vector<probe> const& list) {
    // __FILE__ is absolute: CMake hands the compiler absolute source paths.
    auto const script = std::filesystem::path(__FILE__).parent_path() / "botocore_sign.py";
    REQUIRE_MESSAGE(std::filesystem::exists(script), "botocore_sign.py not found at " << script);
    REQUIRE_MESSAGE(std::filesystem::exists("/usr/bin/python3"),
                    "/usr/bin/python3 is missing: install the Debian packages python3 and awscli");
    json::array input;
    for (auto const& p : list)
        input.push_back(to_json(p));
    auto const result = run("/usr/bin/python3 -I " + shell_quote(script.string()) + " " +
                            shell_quote(json::serialize(input)) + " 2>&1");
    REQUIRE_MESSAGE(result.status == 0, "botocore_sign.py failed (exit " << result.status
                                                                        << "): " << result.output);
    auto const last_line = result.output.substr(result.output.rfind('\n', result.output.size() - 2) + 1);
    boost::system::error_code ec;
    json::value answer = json::parse(last_line, ec);
    REQUIRE_MESSAGE((!ec && answer.is_array() && answer.as_array().size() == list.size()),
                    "botocore_sign.py gave no answer per request: " << result.output);
    return answer.as_array();
}

std::string text(json::value const& v, char const* key) {
    return json::value_to<std::string>(v.as_object().at(key));
}

} // namespace

TEST_CASE("sigv4 agrees with botocore's S3SigV4Auth and SigV4Auth") {
    auto const list = probes();
    auto const answers = botocore_sign(list);
    for (std::size_t i = 0; i < list.size(); ++i) {
        auto const& p = list[i];
        auto const& theirs = answers[i];
        INFO("probe: " << p.name);
        // The path: ours encoded with uri_encode, theirs as botocore's S3 serializer does.
        signing_request request{p.method, p.host, uri_encode(p.raw_path, true), p.query, p.headers,
                                p.payload};
        CHECK(request.path == text(theirs, "path"));
        auto const ours = sign(request, p.creds, p.region, p.service, p.amz_date);
        CHECK(ours.canonical_request == text(theirs, "canonical_request"));
        CHECK(ours.string_to_sign == text(theirs, "string_to_sign"));
        CHECK(ours.headers.at(0).second == text(theirs, "authorization"));
        if (!p.aws_signature.empty())
            CHECK(text(theirs, "authorization").ends_with(", Signature=" + p.aws_signature));
    }
}

TEST_CASE("sigv4 agrees with botocore with a session token") {
    probe p{"a session token", "GET", "https", "s3.example.com", "/bucket/k", {{"uploads", ""}}, {}};
    p.creds.session_token = "IQoJb3JpZ2luX2VjEHYaCXVzLWVhc3QtMSJHMEUCIQ+/token==";
    auto const answers = botocore_sign({p});
    signing_request request{p.method, p.host, uri_encode(p.raw_path, true), p.query, p.headers, p.payload};
    auto const ours = sign(request, p.creds, p.region, p.service, p.amz_date);
    CHECK(ours.canonical_request == text(answers[0], "canonical_request"));
    CHECK(ours.headers.at(0).second == text(answers[0], "authorization"));
    CHECK(ours.headers.at(0).second.find("x-amz-security-token") != std::string::npos);
}
