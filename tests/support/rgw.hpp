#pragma once
// A real S3 server for the S3 tests: Ceph's RADOS Gateway (Debian 12's radosgw, Ceph
// 16.2.15), a throwaway single-node cluster started by scripts/deps/rgw/start-rgw.sh on
// 127.0.0.1 with its data in memory, in about a second and a half. Unlike s3rver, RGW
// checks SigV4 signatures and payload hashes, honours If-None-Match: * on PUT (412), and
// lists and aborts multipart uploads; docs/design.md ("Ceph RGW") lists where it differs
// from AWS and how the code copes.
//
// One cluster per test process, started on first use and stopped when the process exits
// (ctest runs each test case in a process of its own); each user of it takes a bucket of
// its own (create_bucket).

#include "tests/support/temp_dir.hpp"

#include <filesystem>
#include <string>

namespace mirror::test {

class rgw_server {
public:
    /// The process's cluster, started on the first call; throws std::runtime_error when
    /// radosgw is not installed (the message says to run scripts/setup) or does not start.
    static rgw_server& shared();

    ~rgw_server();
    rgw_server(rgw_server const&) = delete;
    rgw_server& operator=(rgw_server const&) = delete;

    /// "http://127.0.0.1:PORT", without a trailing slash.
    std::string const& endpoint() const { return endpoint_; }
    std::string const& access_key_id() const { return access_key_; }
    std::string const& secret_access_key() const { return secret_key_; }
    /// RGW accepts any region in the credential scope.
    std::string region() const { return "us-east-1"; }
    /// The endpoint's port.
    std::uint16_t port() const;

    /// Creates an empty bucket named `prefix` and a number unique in this process, and
    /// returns its name.
    std::string create_bucket(std::string const& prefix);
    /// An empty bucket named exactly `name`: emptied and made again when this cluster
    /// already has it (a test binary run whole shares one cluster across its cases).
    std::string fresh_bucket(std::string const& name);

    /// A credentials file of fdl-mirror's own for this user, in the cluster's folder.
    std::filesystem::path credentials_file() const { return root_ / "s3-credentials"; }

    /// Runs `arguments` with radosgw-admin against this cluster (CEPH_CONF set) and
    /// returns what it printed; throws when it fails.
    std::string admin(std::string const& arguments) const;

    /// The last lines of radosgw's log, for a failing test's INFO.
    std::string log_tail() const;

private:
    rgw_server();
    void start();
    std::string make_bucket(std::string const& name);

    temp_dir root_;
    std::string endpoint_, access_key_, secret_key_, conf_, stop_script_;
    int buckets_made_ = 0;
};

} // namespace mirror::test
