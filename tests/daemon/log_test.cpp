#include "daemon/log.hpp"

#include <boost/json/parse.hpp>
#include <doctest/doctest.h>

#include <cstdio>

using namespace mirror;
using config::log_format;
using config::log_level;

TEST_CASE("a plain line has the priority prefix, the repository and version, and stays one line") {
    auto line = daemon::format_log_line(log_format::plain, {log_level::warning, "population", "019a", "held:\nbad\tsize"});
    CHECK(line == "<4>repo=population version=019a held:\\nbad\\tsize\n");
    CHECK(daemon::format_log_line(log_format::plain, {log_level::info, "", "", "started"}) == "<6>started\n");
    CHECK(daemon::format_log_line(log_format::plain, {log_level::error, "r", "", "a\x01z"}) == "<3>repo=r a\\x01z\n");
    CHECK(daemon::format_log_line(log_format::plain, {log_level::debug, "r", "", "x"}).starts_with("<7>"));
    CHECK(daemon::format_log_line(log_format::plain, {log_level::notice, "r", "", "x"}).starts_with("<5>"));
}

TEST_CASE("a JSON line is one object after the prefix, with the fields a reader filters on") {
    auto line = daemon::format_log_line(log_format::json, {log_level::info, "population", "019a", "published\n\"v\""});
    REQUIRE(line.starts_with("<6>{"));
    REQUIRE(line.ends_with("}\n"));
    CHECK(line.find('\n') == line.size() - 1);
    auto parsed = boost::json::parse(line.substr(3, line.size() - 4)).as_object();
    CHECK(parsed.at("level").as_string() == "info");
    CHECK(parsed.at("repo").as_string() == "population");
    CHECK(parsed.at("version").as_string() == "019a");
    CHECK(parsed.at("message").as_string() == "published\n\"v\"");
    auto bare = boost::json::parse(daemon::format_log_line(log_format::json, {log_level::error, "", "", "x"}).substr(3))
                    .as_object();
    CHECK(!bare.contains("repo"));
    CHECK(!bare.contains("version"));
}

TEST_CASE("a logger writes events at or above its level") {
    std::FILE* out = std::tmpfile();
    REQUIRE(out != nullptr);
    daemon::logger log({log_format::plain, log_level::warning}, out);
    log.info("r", "not shown");
    log.warning("r", "shown");
    log.error("r", "also shown");
    std::rewind(out);
    char buffer[256] = {};
    auto n = std::fread(buffer, 1, sizeof buffer - 1, out);
    std::fclose(out);
    CHECK(std::string(buffer, n) == "<4>repo=r shown\n<3>repo=r also shown\n");
}
