// The S3 test infrastructure itself: s3rver started by s3rver_server, driven by Debian's
// AWS CLI, so that these tests do not depend on the S3 client under test.

#include "tests/support/local_servers.hpp"
#include "tests/support/publisher.hpp"
#include "tests/support/s3rver.hpp"
#include "tests/support/store_backends.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>


#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

using namespace mirror::test;
using namespace std::chrono_literals;
using namespace std::string_view_literals;

namespace {

struct aws_result {
    int exit_code = -1;
    std::string out; ///< stdout, with --output text
    std::string err; ///< stderr: the CLI's error message
};

/// Runs Debian's AWS CLI (/usr/bin/aws, not a pyenv shim on PATH) against `server` with
/// s3rver's credentials, and nothing from the caller's AWS environment or files: no
/// profile, no CA bundle, no other endpoint, no retries (a 500 fails at once).
aws_result aws(s3rver_server const& server, temp_dir const& tmp, std::string const& args,
               std::string_view key_id = s3rver_server::access_key_id) {
    std::string err_file = (tmp / "aws.err").string();
    std::string command =
        "env -u AWS_CA_BUNDLE -u AWS_PROFILE -u AWS_DEFAULT_PROFILE -u AWS_SESSION_TOKEN"
        " -u AWS_SECURITY_TOKEN -u AWS_ENDPOINT_URL -u AWS_ENDPOINT_URL_S3"
        " AWS_ACCESS_KEY_ID=" + std::string(key_id) +
        " AWS_SECRET_ACCESS_KEY=" + std::string(s3rver_server::secret_access_key) +
        " AWS_DEFAULT_REGION=" + std::string(s3rver_server::region) +
        " AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_PAGER="
        " AWS_MAX_ATTEMPTS=1 AWS_RETRY_MODE=standard AWS_EC2_METADATA_DISABLED=true"
        " /usr/bin/aws --endpoint-url " + server.endpoint() + " --output text " + args +
        " 2>'" + err_file + "'";
    auto ran = run_shell(command);
    aws_result result{ran.exit_code, std::move(ran.out), {}};
    result.err = read_file(err_file);
    return result;
}

/// The whitespace-separated words of the CLI's text output.
std::vector<std::string> words(std::string const& text) {
    std::istringstream in(text);
    std::vector<std::string> all;
    for (std::string word; in >> word;)
        all.push_back(word);
    return all;
}

/// Every byte value, then a pattern long enough to span several socket reads.
std::string binary_payload() {
    std::string bytes;
    for (int i = 0; i < 256; ++i)
        bytes.push_back(static_cast<char>(i));
    for (std::uint32_t i = 0, x = 12345; i < 300'000; ++i)
        bytes.push_back(static_cast<char>((x = x * 1103515245 + 12345) >> 16));
    bytes += "\r\n\0end"sv; // a CRLF and a NUL near the end
    return bytes;
}

} // namespace

TEST_CASE("s3rver is installed, since scripts/setup installs it") {
    CHECK_FALSE(s3rver_install_dir().empty());
}

TEST_CASE("s3rver_server fails, naming scripts/setup, when s3rver is not installed") {
    temp_dir tmp;
    CHECK_THROWS_WITH_AS(s3rver_server({{"b"}, tmp / "nothing-here"}), doctest::Contains("run scripts/setup"),
                         std::runtime_error);
}

TEST_CASE("s3rver starts with the buckets asked for and stops in the destructor") {
    temp_dir tmp;
    std::uint16_t port = 0;
    {
        s3rver_server server({{"mirror", "other"}});
        INFO(server.log());
        port = server.port();
        CHECK(server.endpoint() == "http://127.0.0.1:" + std::to_string(port));
        auto buckets = aws(server, tmp, "s3api list-buckets --query 'Buckets[].Name'");
        INFO(buckets.err);
        REQUIRE(buckets.exit_code == 0);
        CHECK(words(buckets.out) == std::vector<std::string>{"mirror", "other"});
        CHECK(std::filesystem::is_directory(server.data_dir() / "mirror"));

        // Another access key id is refused: the credentials are s3rver's own.
        auto refused = aws(server, tmp, "s3api list-objects-v2 --bucket mirror", "SOMEONE");
        CHECK(refused.exit_code != 0);
        CHECK(refused.err.find("InvalidAccessKeyId") != std::string::npos);
    }
    CHECK_FALSE(accepts_connections(port));
}

TEST_CASE("s3rver stores an object the AWS CLI reads back byte for byte") {
    temp_dir tmp;
    s3rver_server server({{"mirror"}});
    INFO(server.log());
    std::string payload = binary_payload();
    write_file(tmp / "in.bin", payload);

    auto put = aws(server, tmp, "s3api put-object --bucket mirror --key 'repo/data/in.bin' --body '" +
                                    (tmp / "in.bin").string() + "' --query ETag");
    INFO(put.err);
    REQUIRE(put.exit_code == 0);
    CHECK(put.out.starts_with("\"")); // the MD5 of the body, quoted

    auto listed = aws(server, tmp, "s3api list-objects-v2 --bucket mirror --query 'Contents[].[Key,Size]'");
    INFO(listed.err);
    CHECK(words(listed.out) == std::vector<std::string>{"repo/data/in.bin", std::to_string(payload.size())});

    auto get = aws(server, tmp, "s3api get-object --bucket mirror --key 'repo/data/in.bin' '" +
                                    (tmp / "out.bin").string() + "' --query ETag");
    INFO(get.err);
    REQUIRE(get.exit_code == 0);
    CHECK(get.out == put.out);
    CHECK(read_file(tmp / "out.bin") == payload);

    auto missing = aws(server, tmp, "s3api head-object --bucket mirror --key repo/missing");
    CHECK(missing.exit_code != 0);
    CHECK(missing.err.find("404") != std::string::npos);
}

TEST_CASE("s3rver pages a listing of more than 1000 keys") {
    temp_dir tmp;
    s3rver_server server({{"mirror"}});
    INFO(server.log());
    // One folder level, zero-padded names: s3rver lists a folder's files in byte order.
    constexpr int count = 1010;
    std::vector<std::string> expected;
    for (int i = 0; i < count; ++i) {
        char name[16];
        std::snprintf(name, sizeof name, "k%04d", i);
        write_file(tmp / "many" / name, name);
        expected.push_back(std::string("many/") + name);
    }
    auto copied = aws(server, tmp, "s3 cp --recursive --only-show-errors '" + (tmp / "many").string() +
                                       "' s3://mirror/many/");
    INFO(copied.err);
    REQUIRE(copied.exit_code == 0);

    // One page of 100 is truncated and names where the next one starts: this is the
    // DES-made token that needs NODE_OPTIONS=--openssl-legacy-provider.
    auto first = aws(server, tmp,
                     "s3api list-objects-v2 --bucket mirror --prefix many/ --max-keys 100 --no-paginate"
                     " --query '[KeyCount,IsTruncated,NextContinuationToken]'");
    INFO(first.err);
    REQUIRE(first.exit_code == 0);
    auto head = words(first.out);
    REQUIRE(head.size() == 3);
    CHECK(head[0] == "100");
    CHECK(head[1] == "True");
    CHECK(head[2] != "None");

    // The CLI follows the tokens, 100 keys a request, through all of them.
    auto paged = aws(server, tmp, "s3api list-objects-v2 --bucket mirror --prefix many/ --page-size 100 --query 'Contents[].Key'");
    INFO(paged.err);
    REQUIRE(paged.exit_code == 0);
    CHECK(words(paged.out) == expected);

    // Without a page size, S3's limit: 1000 keys, then a token.
    auto capped = aws(server, tmp,
                      "s3api list-objects-v2 --bucket mirror --prefix many/ --no-paginate --query '[KeyCount,IsTruncated]'");
    CHECK(words(capped.out) == std::vector<std::string>{"1000", "True"});
}

TEST_CASE("s3rver answers a PUT only once its bytes are in the file, so a GET straight after reads them all") {
    // s3rver 3.7.1 answers when the request's body has ended, before its file is opened
    // and written (lib/stores/filesystem.js resolves on the input's end, not the file's
    // close); scripts/setup patches it (scripts/deps/s3rver/put-answers-after-bytes.patch).
    // The race is narrow: unpatched, this test passed here even under two CPU hogs, and a
    // GET straight after a PUT came back empty once in CI's sanitized run. It stands
    // guard over what the whole S3 suite assumes: a PUT answered is a PUT readable.
    s3rver_backend backend;
    store_backend& b = backend;
    // Small bodies (the file is opened after the answer) and large ones (its last writes
    // are queued after the answer).
    for (int round = 0; round < 200; ++round) {
        CAPTURE(round);
        std::size_t size = round % 10 == 9 ? 2 * 1024 * 1024 + round : 1 + round % 7;
        std::string bytes(size, static_cast<char>('a' + round % 26));
        std::string key = "put-then-get/" + std::to_string(round);
        REQUIRE(b.run_on(mirror::store::write_all(b.subject(), key, bytes, mirror::store::write_mode::replace)));
        auto back = b.run_on(mirror::store::read_if_present(b.subject(), key, 64 * 1024 * 1024));
        REQUIRE(back.has_value());
        REQUIRE(back->has_value());
        REQUIRE(back->value().size() == bytes.size());
        CHECK(back->value() == bytes);
    }
}
