// `fdl-mirror status` and /status: what the origin names (refs, their targets, held
// versions and their messages, the last error) reaches a terminal escaped, and the JSON
// keeps it exact.

#include "daemon/status/status_report.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace mirror;
namespace json = boost::json;

namespace {

constexpr double now = 1'700'000'000;
// An escape sequence that turns a terminal red, and a right-to-left override (U+202E).
std::string const hostile_ref = "refs/heads/esc\x1b[31mred\xe2\x80\xae" "fdp.exe";
std::string const shown_ref = "refs/heads/esc\\x1b[31mred\\u{202e}fdp.exe";
std::string const hostile_target = "v\x1b]0;title\x07";
std::string const hostile_message = "versions/v\x1b[2J/ducklake.duckdb: size is 3\xe2\x80\xae";

daemon::repository_status hostile_status() {
    daemon::repository_status r;
    r.name = "population";
    auto& record = r.state.record;
    record.last_result = "failed";
    record.last_finished = now - 60;
    record.last_error = "origin: " + hostile_ref + ": cannot read";
    record.refs.push_back({hostile_ref, hostile_target, std::string("v1"), 2, now - 3600});
    record.refs.push_back({hostile_ref + "-2", hostile_target, hostile_target, 0, std::nullopt});
    record.held.push_back({"v\x1b" "2", "size_mismatch", hostile_message, now - 120});
    return r;
}

} // namespace

TEST_CASE("status shows the origin's names escaped, and its JSON keeps them exact") {
    std::vector<daemon::repository_status> repositories{hostile_status()};
    auto text = daemon::status_text(repositories, now);
    INFO(text);
    CHECK(text.find('\x1b') == std::string::npos);
    CHECK(text.find('\x07') == std::string::npos);
    CHECK(text.find("\xe2\x80\xae") == std::string::npos);
    CHECK(text.find("  ref " + shown_ref + ": behind for 60 min (since ") != std::string::npos);
    CHECK(text.find("origin v\\x1b]0;title\\x07, mirror v1\n") != std::string::npos);
    CHECK(text.find("  ref " + shown_ref + "-2: in sync at v\\x1b]0;title\\x07\n") != std::string::npos);
    CHECK(text.find("  last error:    origin: " + shown_ref + ": cannot read\n") != std::string::npos);
    CHECK(text.find("  held v\\x1b2 since ") != std::string::npos);
    CHECK(text.find(": size_mismatch: versions/v\\x1b[2J/ducklake.duckdb: size is 3\\u{202e}\n") != std::string::npos);

    // JSON escapes the control characters as JSON does (\u001b), so a parser gets back the
    // exact bytes; U+202E is written as its UTF-8 bytes.
    auto json_text = daemon::status_json(repositories, now, "state_dir");
    CHECK(json_text.find('\x1b') == std::string::npos);
    CHECK(json_text.find("esc\\u001b[31mred\xe2\x80\xae" "fdp.exe") != std::string::npos);
    auto doc = json::parse(json_text);
    auto const& repo = doc.at("repositories").at(0);
    CHECK(repo.at("last_error").as_string() == "origin: " + hostile_ref + ": cannot read");
    auto const& refs = repo.at("refs").as_array();
    REQUIRE(refs.size() == 2);
    CHECK(refs[0].at("name").as_string() == hostile_ref);
    CHECK(refs[0].at("origin").as_string() == hostile_target);
    CHECK(refs[1].at("name").as_string() == hostile_ref + "-2");
    auto const& held = repo.at("held").as_array();
    REQUIRE(held.size() == 1);
    CHECK(held[0].at("version").as_string() == "v\x1b" "2");
    CHECK(held[0].at("message").as_string() == hostile_message);
}

TEST_CASE("a lease that claims too long calls for attention, in the text and the JSON, escaped") {
    daemon::repository_status r;
    r.name = "population";
    r.state.record.last_result = "ok";
    CHECK_FALSE(daemon::needs_attention(r));
    auto quiet = json::parse(daemon::status_json({r}, now, "daemon"));
    CHECK(quiet.at("repositories").at(0).at("lease_anomaly").is_null());
    // The holder's name comes from the lease, which another writer controls.
    r.lease_anomaly = "s3://m/lake/.fdl-mirror/lease: forger\x1b[31m/1's lease claims 315359999 s more";
    CHECK(daemon::needs_attention(r));
    auto text = daemon::status_text({r}, now);
    CHECK(text.find("  lease anomaly: s3://m/lake/.fdl-mirror/lease: forger\\x1b[31m/1's lease claims") !=
          std::string::npos);
    auto doc = json::parse(daemon::status_json({r}, now, "daemon"));
    auto const& repo = doc.at("repositories").at(0);
    CHECK(repo.at("lease_anomaly").as_string() == r.lease_anomaly);
    CHECK(repo.at("attention").as_bool());
}
