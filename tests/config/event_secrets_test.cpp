#include "config/event_secrets.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sys/stat.h>

using namespace mirror::config;

namespace {

std::string all_problems(event_secrets_result const& result) {
    std::string out;
    if (!result)
        for (auto const& p : result.error())
            out += p.text() + "\n";
    return out;
}

} // namespace

TEST_CASE("event secrets: webhooks' secrets and the S3 token are read") {
    auto read = parse_event_secrets("webhooks:\n  population: \"a secret of sixteen+\"\n  towns: 0123456789abcdef\n"
                                    "s3_token: tok-0123456789abcdef\n",
                                    "events.yaml");
    REQUIRE(read.has_value());
    CHECK(read->webhooks.at("population") == "a secret of sixteen+");
    CHECK(read->webhooks.at("towns") == "0123456789abcdef");
    CHECK(read->s3_token == "tok-0123456789abcdef");
}

TEST_CASE("event secrets: short secrets, a token that is not URL-safe, unknown keys are refused, never quoted") {
    auto read = parse_event_secrets("webhooks:\n  population: short-secret\ns3_token: \"has a space in it!!\"\nextra: 1\n",
                                    "events.yaml");
    REQUIRE_FALSE(read.has_value());
    auto text = all_problems(read);
    CHECK(text.find("'population': the secret is shorter than 16 bytes") != std::string::npos);
    CHECK(text.find("s3_token: must be 16 or more letters") != std::string::npos);
    CHECK(text.find("extra") != std::string::npos);
    CHECK(text.find("short-secret") == std::string::npos);
    CHECK(text.find("has a space") == std::string::npos);
    CHECK_FALSE(parse_event_secrets("", "events.yaml").has_value());
}

TEST_CASE("event secrets: a file others may read is refused") {
    auto dir = std::filesystem::temp_directory_path() / ("fdl-event-secrets-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    auto file = dir / "events.yaml";
    std::ofstream(file) << "s3_token: tok-0123456789abcdef\n";
    ::chmod(file.c_str(), 0644);
    auto open = load_event_secrets(file);
    REQUIRE_FALSE(open.has_value());
    CHECK(all_problems(open).find("others may read or write it (mode 644)") != std::string::npos);
    ::chmod(file.c_str(), 0640);
    CHECK(load_event_secrets(file).has_value());
    std::filesystem::remove_all(dir);
}
