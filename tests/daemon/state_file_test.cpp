#include "daemon/state/state_file.hpp"

#include "core/io/errors.hpp"
#include "tests/support/publisher.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <csignal>
#include <optional>
#include <set>
#include <sys/resource.h>
#include <unistd.h>

using namespace mirror;
using daemon::repository_state;
using daemon::state_dir;
using test::read_file;
using test::temp_dir;
using test::write_file;
namespace fs = std::filesystem;

namespace {

/// Every byte value, so base64 and JSON escaping are both exercised.
std::string all_bytes() {
    std::string out;
    for (int c = 0; c < 256; ++c)
        out += static_cast<char>(c);
    return out;
}

repository_state sample_state() {
    repository_state s;
    s.last_success = 1700000000.25;
    s.last_attempt = 1700000300.5;
    s.consecutive_failures = 3;
    s.failing_since = 1699999000.75;
    s.configured_since = 1690000000.5;
    s.paused = coord::pause_record{1700000400.5, "alice@ops-1", "origin migration"};
    s.origin = "https://example.org/population/";
    s.origin_cache = {{"fdl.json", "If-None-Match", "\"65a1-1f\"", "{\"fdl\": \"0.1\"}\n"},
                      {"HEAD", "If-Modified-Since", "Tue, 14 Nov 2023 22:13:20 GMT", "ref: refs/heads/main\n"},
                      {"refs/heads/\xc3\xa9t\xe9", "If-None-Match", "W/\"x\"", all_bytes()},
                      {"refs.json", "If-None-Match", "\"e\"", ""}};
    s.record.last_result = "held";
    s.record.last_finished = 1700000301.5;
    s.record.next_pass = 1700000601.5;
    s.record.refs = {{"refs/heads/main", "v9", std::string("v8"), 1, 1699990000.0}};
    s.record.held = {{"v9", "sha256_mismatch", "versions/v9/ducklake.duckdb: sha256 differs", 1699990000.0}};
    return s;
}

state_dir open_dir(fs::path const& root) {
    auto opened = state_dir::open(root);
    REQUIRE_MESSAGE(opened.has_value(), (opened ? "" : opened.error().message));
    return std::move(*opened);
}

std::vector<std::string> names_in(fs::path const& folder) {
    std::vector<std::string> out;
    for (auto const& entry : fs::directory_iterator(folder))
        out.push_back(entry.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

TEST_CASE("state_dir: open creates repositories/, and a missing file is an empty state without a warning") {
    temp_dir tmp;
    auto dir = open_dir(tmp / "state");
    CHECK(fs::is_directory(tmp / "state" / "repositories"));
    std::string warning;
    CHECK(dir.load("population", &warning) == repository_state{});
    CHECK(warning.empty());
    CHECK(names_in(tmp / "state" / "repositories").empty()); // the write test leaves nothing
}

TEST_CASE("state_dir: open names the folder and the reason when it cannot be used") {
    temp_dir tmp;
    write_file(tmp / "file", "x");
    auto opened = state_dir::open(tmp / "file");
    REQUIRE(!opened);
    CHECK(opened.error().message.find((tmp / "file" / "repositories").string()) != std::string::npos);
    CHECK(opened.error().message.find("ot a directory") != std::string::npos);
}

TEST_CASE("state_dir: a saved state loads back equal, and a second save replaces it") {
    temp_dir tmp;
    auto state = sample_state();
    {
        auto first = open_dir(tmp / "state");
        REQUIRE(first.save("population", state).has_value());
        std::string warning;
        CHECK(first.load("population", &warning) == state);
        CHECK(warning.empty());
    }
    auto dir = open_dir(tmp / "state"); // as after a restart
    CHECK(dir.load("population", nullptr) == state);

    state.consecutive_failures = 0;
    state.failing_since.reset();
    state.last_success.reset();
    state.paused.reset();
    state.origin_cache.pop_back();
    REQUIRE(dir.save("population", state).has_value());
    CHECK(dir.load("population", nullptr) == state);
    CHECK(names_in(tmp / "state" / "repositories") == std::vector<std::string>{"population.json"});
    CHECK(read_file(dir.file_of("population")).find("\"format\":1") != std::string::npos);
}

TEST_CASE("state_dir: forget deletes one repository's file and leaves the others") {
    temp_dir tmp;
    auto dir = open_dir(tmp / "state");
    REQUIRE(dir.save("a", sample_state()).has_value());
    REQUIRE(dir.save("b", sample_state()).has_value());
    dir.forget("a");
    dir.forget("never-saved");
    std::string warning;
    CHECK(dir.load("a", &warning) == repository_state{});
    CHECK(warning.empty());
    CHECK(dir.load("b", nullptr) == sample_state());
}

TEST_CASE("state_dir: a failed write leaves the old file intact and no temporary file") {
    temp_dir tmp;
    auto dir = open_dir(tmp / "state");
    auto old_state = sample_state();
    REQUIRE(dir.save("population", old_state).has_value());
    auto old_text = read_file(dir.file_of("population"));
    auto bigger = old_state;
    bigger.origin_cache.push_back({"big", "If-None-Match", "\"b\"", std::string(100'000, 'b')});

    SUBCASE("the file system refuses the bytes (a file size limit: works as root too)") {
        rlimit saved{};
        REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
        auto* old_handler = std::signal(SIGXFSZ, SIG_IGN); // EFBIG instead of a killed process
        rlimit small = saved;
        small.rlim_cur = 4096;
        REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
        auto saving = dir.save("population", bigger);
        ::setrlimit(RLIMIT_FSIZE, &saved);
        std::signal(SIGXFSZ, old_handler);
        REQUIRE(!saving);
        CHECK(saving.error().message.find(dir.file_of("population").string()) != std::string::npos);
        CHECK(saving.error().message.find("cannot write") != std::string::npos);
    }
    SUBCASE("the folder is read-only (not for root, whom permissions do not stop)") {
        if (::geteuid() == 0)
            return;
        fs::permissions(tmp / "state" / "repositories", fs::perms::owner_write, fs::perm_options::remove);
        auto saving = dir.save("population", bigger);
        fs::permissions(tmp / "state" / "repositories", fs::perms::owner_write, fs::perm_options::add);
        REQUIRE(!saving);
        CHECK(saving.error().message.find("population.json") != std::string::npos);
    }
    SUBCASE("the final name is taken by a folder, so the rename fails") {
        dir.forget("other");
        fs::create_directories(dir.file_of("other") / "inside");
        auto saving = dir.save("other", bigger);
        REQUIRE(!saving);
        CHECK(saving.error().message.find("cannot replace") != std::string::npos);
        fs::remove_all(dir.file_of("other"));
    }
    CHECK(read_file(dir.file_of("population")) == old_text);
    CHECK(dir.load("population", nullptr) == old_state);
    CHECK(names_in(tmp / "state" / "repositories") == std::vector<std::string>{"population.json"});
}

TEST_CASE("state_dir: open removes temporary files a crash left, and nothing else") {
    temp_dir tmp;
    REQUIRE(open_dir(tmp / "state").save("population", sample_state()).has_value());
    write_file(tmp / "state" / "repositories" / ".population.json.Ab12Cd", "{\"form");
    write_file(tmp / "state" / "repositories" / ".write-test.json.Zz9Yy8", "");
    auto dir = open_dir(tmp / "state");
    CHECK(names_in(tmp / "state" / "repositories") == std::vector<std::string>{"population.json"});
    CHECK(dir.load("population", nullptr) == sample_state());
}

TEST_CASE("state_dir: a folder another state_dir holds is refused, naming it, and its files are left alone") {
    temp_dir tmp;
    std::optional<state_dir> first = open_dir(tmp / "state");
    REQUIRE(first->save("population", sample_state()).has_value());
    // A save of the first holder in progress, which a second open must not take for a leftover.
    write_file(tmp / "state" / "repositories" / ".population.json.Ab12Cd", "{\"form");
    auto second = state_dir::open(tmp / "state");
    REQUIRE(!second);
    CHECK(second.error().code == io::store_errc::transient);
    CHECK(second.error().message.find((tmp / "state").string() + ": another fdl-mirror run uses this state folder") !=
          std::string::npos);
    CHECK(names_in(tmp / "state" / "repositories") ==
          std::vector<std::string>{".population.json.Ab12Cd", "population.json"});

    std::optional<state_dir> copy = first; // copies share the lock: held while one lives
    first.reset();
    CHECK(!state_dir::open(tmp / "state"));
    copy.reset();
    auto third = state_dir::open(tmp / "state");
    REQUIRE_MESSAGE(third.has_value(), (third ? "" : third.error().message));
    CHECK(third->load("population", nullptr) == sample_state());
}

TEST_CASE("state_dir: a damaged file is an empty state and a warning naming the file and the reason") {
    temp_dir tmp;
    auto dir = open_dir(tmp / "state");
    REQUIRE(dir.save("population", sample_state()).has_value());
    auto path = dir.file_of("population");
    auto good = read_file(path);
    auto replaced = [&](std::string const& from, std::string const& to) {
        auto at = good.find(from);
        REQUIRE(at != std::string::npos);
        return std::string(good).replace(at, from.size(), to);
    };
    struct damage {
        std::string text, reason;
    };
    std::vector<damage> cases = {
        {"", "not a JSON object"},
        {good.substr(0, good.size() / 2), "not a JSON object"},
        {"[1, 2]", "not a JSON object"},
        {replaced("\"format\":1", "\"format\":2"), "not format 1"},
        {replaced("\"format\":1,", ""), "not format 1"},
        {replaced("\"repository\":\"population\"", "\"repository\":\"other\""), "not the state of repository"},
        {replaced("\"consecutive_failures\":3", "\"consecutive_failures\":-1"), "consecutive_failures"},
        {replaced("\"last_attempt\":", "\"last_attempt\":\"x\",\"y\":"), "last_attempt: not a number"},
        {replaced("\"origin_cache\":[", "\"origin_cache\":[7,"), "origin_cache[0]: not an object"},
        {replaced("\"key\":\"fdl.json\"", "\"key\":1"), "origin_cache[0]: needs key"},
        {replaced("eyJmZGwiOiAiMC4xIn0K", "eyJmZGwiOiAiMC4xIn0$"), "origin_cache[0] (fdl.json): bytes: not base64"},
        // Valid JSON and valid base64, but not the bytes that were saved.
        {replaced("eyJmZGwiOiAiMC4xIn0K", "eyJmZGwiOiAiMC4yIn0K"), "do not match their sha256"},
        {replaced("\"since\":", "\"since\":null,\"x\":"), "status: held[0].since: not a number"},
    };
    for (auto const& c : cases) {
        CAPTURE(c.text);
        write_file(path, c.text);
        std::string warning;
        CHECK(dir.load("population", &warning) == repository_state{});
        CHECK(warning.find(path.string()) != std::string::npos);
        CHECK_MESSAGE(warning.find(c.reason) != std::string::npos, warning);
        CHECK(dir.load("population", nullptr) == repository_state{}); // no warning wanted: fine too
    }

    SUBCASE("a folder in the file's place") {
        fs::remove(path);
        fs::create_directory(path);
        std::string warning;
        CHECK(dir.load("population", &warning) == repository_state{});
        CHECK(warning.find(path.string()) != std::string::npos);
    }
    SUBCASE("a damaged file is replaced by the next save") {
        write_file(path, "garbage");
        REQUIRE(dir.save("population", sample_state()).has_value());
        CHECK(dir.load("population", nullptr) == sample_state());
    }
}

TEST_CASE("state_file_name: any repository name is one safe file name of its own") {
    std::vector<std::string> names = {"population", "", ".", "..", "../x", "a/b", "/etc/passwd", ".hidden",
                                      "a%2Fb", "a/b", "%", "~", "a b", "é", std::string("nul\0l", 5),
                                      std::string(10'000, 'x'), std::string(10'000, '/'),
                                      std::string(10'000, 'x') + "y"};
    std::set<std::string> files;
    std::set<std::string> distinct(names.begin(), names.end());
    for (auto const& name : names) {
        CAPTURE(name);
        auto file = daemon::state_file_name(name);
        CHECK(!file.empty());
        CHECK(file.size() <= 200);
        CHECK(file != ".");
        CHECK(file != "..");
        CHECK(file.front() != '.');
        CHECK(file.ends_with(".json"));
        CHECK(file.find('/') == std::string::npos);
        CHECK(file.find('\0') == std::string::npos);
        for (char c : file)
            CHECK(((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                   std::string_view("._-%~").find(c) != std::string_view::npos));
        files.insert(file);
    }
    CHECK(files.size() == distinct.size());
    CHECK(daemon::state_file_name("population") == "population.json"); // readable for people
    CHECK(daemon::state_file_name("../x") == "%2E.%2Fx.json");
    CHECK(daemon::state_file_name("") == "%.json");
}

TEST_CASE("state_dir: hostile repository names stay inside repositories/ and round-trip") {
    temp_dir tmp;
    auto dir = open_dir(tmp / "state");
    auto folder = tmp / "state" / "repositories";
    std::vector<std::string> names = {"../x", "", ".", "..", "a/b", "../../escape", std::string(5'000, 'n'),
                                      std::string(300, '.')};
    std::size_t n = 0;
    for (auto const& name : names) {
        CAPTURE(name);
        CHECK(dir.file_of(name).parent_path() == folder);
        auto state = sample_state();
        state.consecutive_failures = static_cast<unsigned>(++n);
        REQUIRE(dir.save(name, state).has_value());
        CHECK(dir.load(name, nullptr) == state);
    }
    CHECK(names_in(folder).size() == names.size());
    CHECK(names_in(tmp.path()) == std::vector<std::string>{"state"}); // nothing escaped
    CHECK(names_in(tmp / "state") == std::vector<std::string>{"lock", "repositories"});
}

TEST_CASE("state_dir: a pause whose reason is not valid UTF-8 still saves, and the rest of the state with it") {
    // Issue 45: one field that a strict JSON reader refuses stopped the whole file.
    temp_dir tmp;
    auto dir = open_dir(tmp / "state");
    auto state = sample_state();
    state.paused = coord::pause_record{1700000400.5, "alice\xff", std::string(10, 'x') + "\xc3"};
    REQUIRE(dir.save("population", state));
    std::string warning;
    auto loaded = dir.load("population", &warning);
    CHECK(warning.empty());
    CHECK(loaded.last_success == state.last_success);
    CHECK(loaded.origin_cache == state.origin_cache);
    REQUIRE(loaded.paused.has_value());
    CHECK(loaded.paused->reason == std::string(10, 'x') + "\xef\xbf\xbd");
    CHECK(loaded.paused->by == "alice\xef\xbf\xbd");
}
