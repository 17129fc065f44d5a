// S3 stores against Ceph's RADOS Gateway (tests/support/rgw.hpp): what s3rver cannot
// show because it checks no signature and keeps no multipart state. A folder origin
// mirrored into RGW and read back by the AWS CLI, SigV4 refusing a wrong secret (which
// s3rver would have accepted), and an abandoned multipart upload aborted so that RGW
// lists no incomplete upload. The store contract itself runs against RGW in
// store_conformance_test.cpp, create-only 412s included.

#include "core/store/s3_store.hpp"

#include "core/store/errors.hpp"
#include "core/sync/audit.hpp"
#include "core/sync/sync_pass.hpp"
#include "tests/component/helpers.hpp"
#include "tests/support/local_servers.hpp"
#include "tests/support/rgw.hpp"
#include "tests/support/run.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

#include <span>

using namespace mirror;
using namespace mirror::test;
using store::store_errc;
namespace fs = std::filesystem;

namespace {

std::string shell(std::string const& command) {
    auto ran = run_shell(command + " 2>&1");
    INFO(command << "\n" << ran.out);
    REQUIRE(ran.exit_code == 0);
    return ran.out;
}

struct rgw_fixture {
    temp_dir tmp;
    rgw_server& server = rgw_server::shared();
    std::string bucket = server.create_bucket("mirror");
    event_loop run_on;

    std::unique_ptr<store::s3_store> open(std::string const& prefix, std::string secret = {},
                                          std::size_t part_bytes = 16 * 1024 * 1024) {
        store::s3_store_settings settings;
        settings.access.creds = {server.access_key_id(), secret.empty() ? server.secret_access_key() : secret,
                                 std::nullopt};
        settings.access.endpoint = server.endpoint();
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
        return shell("env -i PATH=/usr/bin:/bin HOME=" + tmp.path().string() +
                     " AWS_ACCESS_KEY_ID=" + server.access_key_id() +
                     " AWS_SECRET_ACCESS_KEY=" + server.secret_access_key() +
                     " AWS_DEFAULT_REGION=us-east-1 AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null"
                     " /usr/bin/aws --endpoint-url " +
                     server.endpoint() + " " + args);
    }
};

} // namespace

TEST_CASE_FIXTURE(rgw_fixture, "against Ceph RGW: a folder origin mirrors into S3, reads back byte for byte, audits clean") {
    publisher origin(tmp / "origin");
    auto sample = publish_sample(origin);
    auto from = open_folder(tmp / "origin", false);
    auto to = open("lake/population/");
    auto r = run_on(sync::run_sync(*from, *to, {}, nullptr));
    INFO(describe(r) << server.log_tail());
    CHECK(r.exit_code() == 0);
    CHECK(r.published.size() == 4);

    aws("s3 cp --recursive --only-show-errors s3://" + bucket + "/lake/population/ " + (tmp / "copy").string());
    for (auto const& f : files_under(tmp / "origin"))
        if (f != "refs.json") // the mirror writes its own, from the refs it holds
            CHECK_MESSAGE(read_file(tmp / "copy" / f) == read_file(tmp / "origin" / f), f);
    CHECK(ref_of(tmp / "copy", "refs/heads/main") == sample.main.back());
    CHECK(reader_visible_problems(tmp / "copy").empty());

    // The refs were moved with conditional writes RGW checks; a second pass copies nothing.
    auto again = run_on(sync::run_sync(*from, *to, {}, nullptr));
    INFO(describe(again));
    CHECK(again.exit_code() == 0);
    CHECK(again.files_copied == 0);
    auto audit = run_on(sync::run_audit(*to, nullptr));
    CHECK(audit.exit_code() == 0);
    CHECK(audit.versions.size() == 4);
}

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
