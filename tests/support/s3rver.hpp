#pragma once
// A real S3 server for the S3 store tests: s3rver 3.7.1 (Node.js), which scripts/setup
// installs from the npm registry into build/deps/s3rver, run on 127.0.0.1 with its objects
// in a private temporary folder.
//
// Credentials: s3rver knows one account, access key id "S3RVER" with secret "S3RVER".
// Another key id gets InvalidAccessKeyId; an unsigned request is served anonymously.
// s3rver checks SigV2 signatures only: for SigV4 it reads the key id out of the
// Authorization header and requires x-amz-content-sha256 and a date within 15 minutes,
// but never checks the signature or the payload hash. So it cannot test a signer: the
// botocore differential test (tests/core/s3) does that.

#include "tests/support/temp_dir.hpp"

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace mirror::test {

struct s3rver_options {
    /// Buckets created at startup (s3rver's --configure-bucket), empty.
    std::vector<std::string> buckets;
    /// The npm prefix holding node_modules/s3rver; empty for the one scripts/setup installs
    /// (this build's deps/s3rver, else the source tree's build/deps/s3rver).
    std::filesystem::path install_dir;
};

/// The npm prefix scripts/setup installs s3rver into, as seen from this build, or empty
/// when s3rver is not installed there. Tests do not skip without it: s3rver_server's
/// constructor fails instead.
std::filesystem::path s3rver_install_dir();

/// An s3rver process on a free port of 127.0.0.1 (it binds port 0 and prints the port it
/// got, so no other process can take it first), with NODE_OPTIONS=--openssl-legacy-provider:
/// s3rver 3.7.1 makes ListObjectsV2 continuation tokens with DES, which Node 17+ refuses
/// without it (every truncated listing is then a 500 InternalError). Path-style URLs:
/// endpoint() + "/BUCKET/KEY". The constructor returns once the buckets exist and the port
/// accepts connections, and throws std::runtime_error when s3rver is not installed (the
/// message says to run scripts/setup) or does not start. The destructor stops it
/// (SIGTERM, then SIGKILL after 5 s) and waits for it. Not thread-safe; use from the
/// test's thread.
class s3rver_server {
public:
    static constexpr std::string_view access_key_id = "S3RVER";
    static constexpr std::string_view secret_access_key = "S3RVER";
    static constexpr std::string_view region = "us-east-1"; ///< the one its tokens accept

    explicit s3rver_server(s3rver_options options = {});
    ~s3rver_server();
    s3rver_server(s3rver_server const&) = delete;
    s3rver_server& operator=(s3rver_server const&) = delete;

    std::uint16_t port() const { return port_; }
    /// "http://127.0.0.1:PORT", without a trailing slash.
    std::string endpoint() const;
    /// s3rver's folder: BUCKET/KEY._S3rver_object (and _metadata.json) for each object,
    /// for a test that wants to look behind the API.
    std::filesystem::path data_dir() const { return root_ / "data"; }
    /// What s3rver printed so far (with --silent: its startup line and any crash), for a
    /// failing test's INFO.
    std::string log() const;

private:
    void start(std::filesystem::path const& cli, std::vector<std::string> const& buckets);
    void stop();

    temp_dir root_;
    std::uint16_t port_ = 0;
    pid_t pid_ = -1;
};

} // namespace mirror::test
