// S3 stores against Ceph's RADOS Gateway (tests/support/rgw.hpp): what s3rver cannot
// show because it checks no signature and keeps no multipart state: SigV4 refusing a
// wrong secret (which s3rver would accept), and an abandoned multipart upload aborted so
// that RGW lists no incomplete upload. The store contract runs against RGW in
// store_conformance_test.cpp (create-only 412s included), and s3_store_test.cpp runs
// each of its tests against s3rver and RGW.

#include "core/store/s3_store.hpp"

#include "core/io/errors.hpp"
#include "core/sync/sync_pass.hpp"
#include "tests/component/aws_cli.hpp"
#include "tests/component/helpers.hpp"
#include "tests/support/fault_proxy.hpp"
#include "tests/support/local_servers.hpp"
#include "tests/support/rgw.hpp"
#include "tests/support/run.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <span>

using namespace mirror;
using namespace mirror::test;
using io::store_errc;
namespace fs = std::filesystem;

namespace {

struct rgw_fixture {
    temp_dir tmp;
    rgw_server& server = rgw_server::shared();
    std::string bucket = server.create_bucket("mirror");
    event_loop run_on;

    std::unique_ptr<store::s3_store> open(std::string const& prefix, std::string secret = {},
                                          std::size_t part_bytes = 16 * 1024 * 1024, std::string endpoint = {}) {
        store::s3_store_settings settings;
        settings.access.creds = {server.access_key_id(), secret.empty() ? server.secret_access_key() : secret,
                                 std::nullopt};
        settings.access.endpoint = endpoint.empty() ? server.endpoint() : endpoint;
        settings.access.region = server.region();
        settings.access.path_style = true;
        settings.allow_plain_http = true;
        settings.part_bytes = part_bytes;
        settings.multipart_threshold = part_bytes;
        settings.client.backoff_base = std::chrono::milliseconds(1);
        auto opened = store::s3_store::open("s3://" + bucket + "/" + prefix, settings);
        REQUIRE_MESSAGE(opened.has_value(), (opened ? "" : opened.error().message));
        return std::move(*opened);
    }

    /// The AWS CLI from Debian, pointed at RGW and at nothing else.
    std::string aws(std::string const& args) {
        return aws_cli(tmp.path(), server.endpoint(), server.access_key_id(), server.secret_access_key(), args);
    }
};

} // namespace

TEST_CASE_FIXTURE(rgw_fixture, "against Ceph RGW: a wrong secret fails SigV4 and is access denied, never echoed") {
    auto good = open("x/");
    REQUIRE(run_on(store::write_all(*good, "fdl.json", "{}", store::write_mode::replace)));
    auto wrong = open("x/", "a-very-secret-but-wrong-value");
    auto r = run_on(store::read_all(*wrong, "fdl.json", 100));
    REQUIRE(!r);
    CHECK(r.error().code == store_errc::access_denied);
    CHECK(r.error().message.find("a-very-secret-but-wrong-value") == std::string::npos);
    CHECK(r.error().message.find("SignatureDoesNotMatch") != std::string::npos);
}

TEST_CASE_FIXTURE(rgw_fixture, "against Ceph RGW: a multipart upload abandoned before commit leaves no upload behind") {
    auto s3 = open("parts/", {}, 5 * 1024 * 1024);
    std::string big(12 * 1024 * 1024, '\0'); // two whole parts sent, a third being filled
    for (std::size_t i = 0; i < big.size(); ++i)
        big[i] = static_cast<char>(i % 251);
    {
        auto writer = run_on(s3->open_writer("big.bin", store::write_mode::create_only));
        REQUIRE(writer.has_value());
        for (std::size_t at = 0; at < big.size(); at += 64 * 1024)
            REQUIRE(run_on((*writer)->write(std::as_bytes(std::span(big).subspan(at, 64 * 1024)))));
        // RGW holds the upload and its parts now.
        CHECK(aws("s3api list-multipart-uploads --bucket " + bucket).find("parts/big.bin") != std::string::npos);
    } // destroyed without commit: the writer aborts the upload
    run_on.io.restart();
    run_on.io.run(); // the abort the destructor spawned
    CHECK(aws("s3api list-multipart-uploads --bucket " + bucket).find("parts/big.bin") == std::string::npos);
    CHECK(run_on(s3->stat("big.bin")).error().code == store_errc::not_found);
}

TEST_CASE_FIXTURE(rgw_fixture, "against Ceph RGW: a body damaged in transit fails the payload hash, is not stored, and is sent again") {
    // s3rver checks no payload hash: only a real server can show this.
    fault_proxy proxy{{.upstream_port = server.port()}};
    auto s3 = open("hash/", {}, 5 * 1024 * 1024, proxy.endpoint());
    std::string small(100 * 1024, 'a'), big(11 * 1024 * 1024, 'b');
    for (std::size_t i = 0; i < big.size(); i += 997)
        big[i] = static_cast<char>('c' + i % 20);

    // Once: RGW refuses the damaged PUT (XAmzContentSHA256Mismatch), the store sends it again.
    proxy.fail_matching("PUT", "hash/once", corrupt_request_body());
    REQUIRE(run_on(store::write_all(*s3, "once", small, store::write_mode::create_only)));
    auto refused = [&](std::string const& target_part) {
        std::size_t n = 0;
        for (auto const& r : proxy.requests())
            if (r.method == "PUT" && r.target.find(target_part) != std::string::npos && r.status == 400)
                ++n;
        return n;
    };
    CHECK(refused("hash/once") == 1);
    CHECK(run_on(store::read_all(*s3, "once", small.size())).value() == small);

    // A part of a multipart upload, damaged once: the part is sent again, the object whole.
    proxy.fail_matching("PUT", "partNumber=2", corrupt_request_body());
    REQUIRE(run_on(store::write_all(*s3, "parts", big, store::write_mode::create_only)));
    CHECK(refused("partNumber=2") == 1);
    CHECK(run_on(store::read_all(*s3, "parts", big.size())).value() == big);

    // Always: the write fails, transient, and nothing is stored under the key.
    proxy.fail_matching("PUT", "hash/always", corrupt_request_body(), 100);
    auto failed = run_on(store::write_all(*s3, "always", small, store::write_mode::create_only));
    REQUIRE(!failed);
    CHECK(failed.error().code == store_errc::transient);
    CHECK(failed.error().message.find("XAmzContentSHA256Mismatch") != std::string::npos);
    CHECK(refused("hash/always") == 5); // max_attempts
    CHECK(run_on(s3->stat("always")).error().code == store_errc::not_found);
}

TEST_CASE_FIXTURE(rgw_fixture, "against Ceph RGW: virtual-hosted addressing, BUCKET.localhost, as RGW's dns name serves it") {
    // The proxy shows what went on the wire: the bucket in the Host header, not in the path.
    fault_proxy proxy{{.upstream_port = server.port()}};
    store::s3_store_settings settings;
    settings.access.creds = {server.access_key_id(), server.secret_access_key(), std::nullopt};
    settings.access.endpoint = "http://localhost:" + std::to_string(proxy.port());
    settings.access.region = server.region();
    settings.access.path_style = false;
    settings.allow_plain_http = true;
    auto opened = store::s3_store::open("s3://" + bucket + "/vh/", settings);
    REQUIRE(opened.has_value());
    auto& s3 = **opened;
    REQUIRE(run_on(store::write_all(s3, "a/b.txt", "virtual", store::write_mode::create_only)));
    CHECK(run_on(store::read_all(s3, "a/b.txt", 100)).value() == "virtual");
    std::size_t listed = 0;
    std::function<result<void>(store::list_entry)> count = [&](store::list_entry e) -> result<void> {
        CHECK(e.key == "a/b.txt");
        ++listed;
        return {};
    };
    REQUIRE(run_on(s3.list("", count)));
    CHECK(listed == 1);
    auto requests = proxy.requests();
    REQUIRE(requests.size() >= 3);
    for (auto const& r : requests) {
        CAPTURE(r.target);
        CHECK(r.header("host") == bucket + ".localhost:" + std::to_string(proxy.port()));
        CHECK_FALSE(r.target.starts_with("/" + bucket));
    }
    // And the AWS CLI, path-style, sees the object where the store put it.
    CHECK(aws("s3 cp s3://" + bucket + "/vh/a/b.txt -") == "virtual");
}

TEST_CASE_FIXTURE(rgw_fixture, "against Ceph RGW: the next pass aborts the incomplete uploads a killed pass left, and only its own") {
    // What a pass killed mid-upload leaves: an upload created, a part sent, never completed
    // nor aborted. Made with the AWS CLI, as no live writer of ours leaves one.
    auto leave_upload = [&](std::string const& key) {
        auto created = aws("s3api create-multipart-upload --bucket " + bucket + " --key " + key +
                           " --query UploadId --output text");
        std::string id = created.substr(0, created.find_first_of("\r\n"));
        std::ofstream(tmp / "part") << std::string(1024, 'p');
        aws("s3api upload-part --bucket " + bucket + " --key " + key + " --part-number 1 --upload-id " + id +
            " --body " + (tmp / "part").string());
    };
    leave_upload("lake/population/data/main/population/killed.parquet");
    leave_upload("lake/population/versions/x/ducklake.duckdb");
    leave_upload("lake/other/data/f.parquet"); // another repository's mirror in the bucket
    auto uploads = [&] { return aws("s3api list-multipart-uploads --bucket " + bucket); };
    REQUIRE(uploads().find("killed.parquet") != std::string::npos);

    publisher origin(tmp / "origin");
    publish_sample(origin);
    auto from = open_folder(tmp / "origin", false);
    auto to = open("lake/population/");
    auto r = run_on(sync::run_sync(*from, *to, {}, nullptr));
    INFO(describe(r));
    CHECK(r.exit_code() == 0);
    bool said = false;
    for (auto const& w : r.warnings)
        said = said || w.find("discarded 2 unfinished write(s)") != std::string::npos;
    CHECK(said);
    auto left = uploads();
    CHECK(left.find("lake/population/") == std::string::npos);
    CHECK(left.find("lake/other/data/f.parquet") != std::string::npos);

    // Nothing left: the next pass says nothing of it.
    auto again = run_on(sync::run_sync(*from, *to, {}, nullptr));
    for (auto const& w : again.warnings)
        CHECK(w.find("discarded") == std::string::npos);
}
