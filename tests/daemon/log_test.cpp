#include "daemon/common/log.hpp"

#include <boost/json/parse.hpp>
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sys/stat.h>

using namespace mirror;
using config::log_format;
using config::log_level;

namespace {

using daemon::log_sink;
auto const at = std::chrono::system_clock::time_point(std::chrono::milliseconds(1764669600123)); // 2025-12-02T10:00:00.123Z

std::string line_of(log_format format, log_sink sink, daemon::log_event const& event) {
    return daemon::format_log_line(format, sink, event, at);
}

} // namespace

TEST_CASE("under journald a plain line has the priority prefix and no time, elsewhere the time and the level") {
    auto line = line_of(log_format::plain, log_sink::journald, {log_level::warning, "population", "019a", "held:\nbad\tsize"});
    CHECK(line == "<4>repo=population version=019a held:\\nbad\\tsize\n");
    CHECK(line_of(log_format::plain, log_sink::journald, {log_level::info, "", "", "started"}) == "<6>started\n");
    CHECK(line_of(log_format::plain, log_sink::journald, {log_level::error, "r", "", "a\x01z"}) == "<3>repo=r a\\x01z\n");
    CHECK(line_of(log_format::plain, log_sink::journald, {log_level::debug, "r", "", "x"}).starts_with("<7>"));
    CHECK(line_of(log_format::plain, log_sink::journald, {log_level::notice, "r", "", "x"}).starts_with("<5>"));
    CHECK(line_of(log_format::plain, log_sink::stream, {log_level::warning, "population", "019a", "held:\nx"}) ==
          "2025-12-02T10:00:00.123Z warning repo=population version=019a held:\\nx\n");
    CHECK(line_of(log_format::plain, log_sink::stream, {log_level::debug, "", "", "lease renewed"}) ==
          "2025-12-02T10:00:00.123Z debug lease renewed\n");
}

TEST_CASE("a JSON line is one JSON object, with its time, level, fields and structured members") {
    daemon::log_field const fields[] = {{"ref", std::string_view("refs/heads/main")},
                                        {"duration_seconds", 1.25},
                                        {"files_copied", std::uint64_t{14}}};
    auto line = line_of(log_format::json, log_sink::stream,
                        {log_level::info, "population", "019a", "published\n\"v\"", fields});
    REQUIRE(line.starts_with("{")); // nothing before it: any JSON reader takes the line
    REQUIRE(line.ends_with("}\n"));
    CHECK(line.find('\n') == line.size() - 1);
    auto parsed = boost::json::parse(line).as_object();
    CHECK(parsed.at("time").as_string() == "2025-12-02T10:00:00.123Z");
    CHECK(parsed.at("level").as_string() == "info");
    CHECK(parsed.at("repo").as_string() == "population");
    CHECK(parsed.at("version").as_string() == "019a");
    CHECK(parsed.at("message").as_string() == "published\n\"v\"");
    CHECK(parsed.at("ref").as_string() == "refs/heads/main");
    CHECK(parsed.at("duration_seconds").as_double() == 1.25);
    CHECK(parsed.at("files_copied").to_number<std::uint64_t>() == 14);
    auto bare = boost::json::parse(line_of(log_format::json, log_sink::stream, {log_level::error, "", "", "x"})).as_object();
    CHECK(!bare.contains("repo"));
    CHECK(!bare.contains("version"));
    // Under journald the prefix gives the entry its priority; journald strips it.
    auto journal = line_of(log_format::json, log_sink::journald, {log_level::error, "", "", "x"});
    REQUIRE(journal.starts_with("<3>{"));
    CHECK(boost::json::parse(journal.substr(3)).as_object().at("level").as_string() == "error");
}

TEST_CASE("the journal's stream is recognised by $JOURNAL_STREAM's device and inode, nothing else") {
    std::FILE* out = std::tmpfile();
    REQUIRE(out != nullptr);
    struct stat about {};
    REQUIRE(::fstat(::fileno(out), &about) == 0);
    std::string const mine = std::to_string(about.st_dev) + ":" + std::to_string(about.st_ino);
    ::setenv("JOURNAL_STREAM", mine.c_str(), 1);
    CHECK(daemon::is_journal_stream(out));
    ::setenv("JOURNAL_STREAM", (std::to_string(about.st_dev) + ":" + std::to_string(about.st_ino + 1)).c_str(), 1);
    CHECK_FALSE(daemon::is_journal_stream(out));
    ::setenv("JOURNAL_STREAM", "garbage", 1);
    CHECK_FALSE(daemon::is_journal_stream(out));
    ::unsetenv("JOURNAL_STREAM");
    CHECK_FALSE(daemon::is_journal_stream(out));
    std::fclose(out);
}

TEST_CASE("a logger writes events at or above its level") {
    std::FILE* out = std::tmpfile();
    REQUIRE(out != nullptr);
    daemon::logger log({log_format::plain, log_level::warning}, out, daemon::log_sink::journald);
    log.info("r", "not shown");
    log.warning("r", "shown");
    log.error("r", "also shown");
    std::rewind(out);
    char buffer[256] = {};
    auto n = std::fread(buffer, 1, sizeof buffer - 1, out);
    std::fclose(out);
    CHECK(std::string(buffer, n) == "<4>repo=r shown\n<3>repo=r also shown\n");
}
