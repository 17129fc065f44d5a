#pragma once
// Debian's AWS CLI as an independent S3 client for the component tests: it reads back what
// fdl-mirror wrote, and makes what no writer of ours leaves (an incomplete upload).

#include "tests/support/local_servers.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

namespace mirror::test {

/// Runs `aws ARGS` against `endpoint` with these keys and nothing else (no AWS files, a
/// private HOME), and returns what it printed; fails the test when it fails.
inline std::string aws_cli(std::filesystem::path const& home, std::string const& endpoint,
                           std::string const& access_key, std::string const& secret_key, std::string const& args) {
    std::string const command = "env -i PATH=/usr/bin:/bin HOME=" + home.string() + " AWS_ACCESS_KEY_ID=" +
                                access_key + " AWS_SECRET_ACCESS_KEY=" + secret_key +
                                " AWS_DEFAULT_REGION=us-east-1 AWS_CONFIG_FILE=/dev/null"
                                " AWS_SHARED_CREDENTIALS_FILE=/dev/null /usr/bin/aws --endpoint-url " +
                                endpoint + " " + args + " 2>&1";
    auto ran = run_shell(command);
    INFO(command << "\n" << ran.out);
    REQUIRE(ran.exit_code == 0);
    return ran.out;
}

} // namespace mirror::test
