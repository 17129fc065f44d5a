// Versions that fail a check are held: nothing of them that readers look at appears,
// no ref moves to or past them, the reason is reported, and the next pass tries again.

#include "core/sync/sync_pass.hpp"

#include "core/fdl/errors.hpp"
#include "tests/component/helpers.hpp"
#include "tests/support/run.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

using namespace mirror;
using namespace mirror::test;
using sync::sync_errc;
namespace fs = std::filesystem;

namespace {

struct fixture {
    temp_dir tmp;
    publisher origin{tmp / "origin"};
    sample_repo sample = publish_sample(origin);
    fs::path mirror = tmp / "mirror";

    sync::sync_report pass(sync::sync_options options = {}) { return sync_folders(tmp / "origin", mirror, options); }
    fs::path dev_dir() const { return origin.version_dir(sample.dev_tip); }
    void expect_dev_held_and_main_mirrored(sync::sync_report const& r) {
        INFO(describe(r));
        CHECK(r.exit_code() == 1);
        CHECK(!fs::exists(mirror / "versions" / sample.dev_tip / "version.json"));
        CHECK(ref_of(mirror, "refs/heads/dev").empty());
        CHECK(ref_of(mirror, "refs/heads/main") == sample.main.back());
        CHECK(ref_of(mirror, "refs/tags/v1") == sample.main.front());
        CHECK(reader_visible_problems(mirror).empty());
    }
};

} // namespace

TEST_CASE_FIXTURE(fixture, "a catalog whose sha256 differs from version.json holds the version") {
    auto catalog = read_file(dev_dir() / "ducklake.duckdb");
    catalog[0] ^= 1; // same size, other bytes
    write_file(dev_dir() / "ducklake.duckdb", catalog);
    auto r = pass();
    CHECK(held_for(r, sample.dev_tip, sync_errc::sha256_mismatch));
    CHECK(r.held.front().why.message.find("ducklake.duckdb: sha256 is") != std::string::npos);
    CHECK(!fs::exists(mirror / "versions" / sample.dev_tip / "ducklake.duckdb")); // never committed
    expect_dev_held_and_main_mirrored(r);
    // The next pass tries again, and still holds it.
    auto again = pass();
    CHECK(held_for(again, sample.dev_tip, sync_errc::sha256_mismatch));
}

TEST_CASE_FIXTURE(fixture, "a catalog of another size, dataset.json or files.json that fail their pins hold") {
    SUBCASE("catalog longer") { write_file(dev_dir() / "ducklake.duckdb", read_file(dev_dir() / "ducklake.duckdb") + "x"); }
    SUBCASE("dataset.json changed") { write_file(dev_dir() / "dataset.json", "{\"name\":\"x\",\"title\":\"y\"}\n"); }
    SUBCASE("files.json changed") { write_file(dev_dir() / "files.json", "{\"tables\":{}}\n"); }
    auto r = pass();
    REQUIRE(r.held.size() == 1);
    CHECK((r.held[0].why.code == sync_errc::size_mismatch || r.held[0].why.code == sync_errc::sha256_mismatch));
    expect_dev_held_and_main_mirrored(r);
}

TEST_CASE_FIXTURE(fixture, "a data file of the wrong size holds the version and is not copied") {
    write_file(origin.data_path("main/population/ducklake-0004.parquet"), "short");
    auto r = pass();
    CHECK(held_for(r, sample.dev_tip, sync_errc::size_mismatch));
    CHECK(!fs::exists(mirror / "data/main/population/ducklake-0004.parquet"));
    expect_dev_held_and_main_mirrored(r);
    // The held version still needs that file (at least): the daemon's pending gauges.
    CHECK(r.pending_files >= 1);
    CHECK(r.pending_bytes > 5);
}

TEST_CASE_FIXTURE(fixture, "a missing data file holds its version and every descendant, and the tag still mirrors") {
    fs::remove(origin.data_path("main/towns/ducklake-0003.parquet")); // needed from main[1] on
    auto r = pass();
    INFO(describe(r));
    CHECK(held_for(r, sample.main[1], sync_errc::missing_file));
    CHECK(held_for(r, sample.main[2], sync_errc::ancestor_held));
    CHECK(held_for(r, sample.dev_tip, sync_errc::ancestor_held));
    CHECK(ref_of(mirror, "refs/tags/v1") == sample.main.front());
    CHECK(ref_of(mirror, "refs/heads/main").empty());
    CHECK(r.exit_code() == 1);
    CHECK(reader_visible_problems(mirror).empty());
    // The drift: main lacks main[1] and main[2], dev those and its own tip; v1 is in sync.
    auto state_of = [](sync::sync_report const& report, std::string const& name) {
        for (auto const& s : report.refs)
            if (s.name == name)
                return s;
        FAIL("no state for " << name);
        return sync::ref_state{};
    };
    CHECK(r.refs.size() == 3);
    CHECK(!state_of(r, "refs/heads/main").in_sync());
    CHECK(!state_of(r, "refs/heads/main").mirror_target);
    CHECK(state_of(r, "refs/heads/main").versions_behind == 2);
    CHECK(state_of(r, "refs/heads/dev").versions_behind == 3);
    CHECK(state_of(r, "refs/tags/v1").in_sync());
    CHECK(state_of(r, "refs/tags/v1").versions_behind == 0);
    CHECK(r.pending_files >= 1); // at least the missing file; descendants were not planned
    CHECK(r.pending_bytes >= 700);
    // Once the origin serves the file again, everything is published.
    write_file(origin.data_path("main/towns/ducklake-0003.parquet"), std::string(700, 'c'));
    auto fixed = pass();
    INFO(describe(fixed));
    CHECK(fixed.exit_code() == 0);
    CHECK(fixed.published.size() == 3);
    CHECK(fixed.pending_files == 0);
    CHECK(fixed.pending_bytes == 0);
    CHECK(ref_of(mirror, "refs/heads/main") == sample.main.back());
    for (auto const& s : fixed.refs) {
        CAPTURE(s.name);
        CHECK(s.in_sync());
        CHECK(s.versions_behind == 0);
    }
}

TEST_CASE_FIXTURE(fixture, "unsafe paths in files.json and version.json hold the version") {
    std::string bad;
    SUBCASE("traversal") { bad = "../../../etc/passwd"; }
    SUBCASE("absolute") { bad = "/etc/passwd"; }
    SUBCASE("another host") { bad = "s3://elsewhere/x.parquet"; }
    SUBCASE("backslash") { bad = "main\\\\t\\\\x.parquet"; } // JSON-escaped: main\\t\\x.parquet
    repin(origin, sample.dev_tip, "files",
          "{\"tables\":{\"main.t\":{\"files\":[{\"path\":\"" + bad + "\",\"rows\":1,\"bytes\":3}]}}}");
    auto r = pass();
    REQUIRE(r.held.size() == 1);
    CHECK(r.held[0].why.code == fdl::fdl_errc::bad_path);
    CHECK(r.held[0].why.message.find("files.json") != std::string::npos);
    expect_dev_held_and_main_mirrored(r);
}

TEST_CASE_FIXTURE(fixture, "a version.json that is invalid or names another folder holds the version") {
    auto record = read_file(dev_dir() / "version.json");
    SUBCASE("truncated") { write_file(dev_dir() / "version.json", record.substr(0, record.size() / 2)); }
    SUBCASE("id of another version") {
        auto pos = record.find(sample.dev_tip);
        record.replace(pos, sample.dev_tip.size(), sample.main.front());
        write_file(dev_dir() / "version.json", record);
    }
    SUBCASE("unknown major version") {
        auto pos = record.find("\"fdl\":\"0.1\"");
        REQUIRE(pos != std::string::npos);
        record.replace(pos, 11, "\"fdl\":\"9.0\"");
        write_file(dev_dir() / "version.json", record);
    }
    auto r = pass();
    REQUIRE(r.held.size() == 1);
    CHECK(r.held[0].id == sample.dev_tip);
    CHECK(r.held[0].why.code.category() == fdl::fdl_category());
    expect_dev_held_and_main_mirrored(r);
}

TEST_CASE_FIXTURE(fixture, "a file that is a symbolic link at a folder origin holds the version") {
    write_file(tmp / "elsewhere.json", read_file(dev_dir() / "dataset.json"));
    fs::remove(dev_dir() / "dataset.json");
    fs::create_symlink(tmp / "elsewhere.json", dev_dir() / "dataset.json");
    auto r = pass();
    CHECK(held_for(r, sample.dev_tip, sync_errc::not_a_regular_file));
    expect_dev_held_and_main_mirrored(r);
}

TEST_CASE_FIXTURE(fixture, "refs with refused names or content are reported and not mirrored") {
    write_file(tmp / "origin" / "refs/heads/bad..name", sample.main.back() + "\n");
    write_file(tmp / "origin" / "refs/heads/x.lock", sample.main.back() + "\n");
    write_file(tmp / "origin" / "refs/tags/junk", "not a version\n");
    auto r = pass();
    INFO(describe(r));
    CHECK(violated(r, sync_errc::refused_ref, "refs/heads/bad..name"));
    CHECK(violated(r, sync_errc::refused_ref, "refs/heads/x.lock"));
    CHECK(violated(r, sync_errc::refused_ref, "refs/tags/junk")); // read twice, and `sync` has no next pass
    CHECK(r.exit_code() == 1);
    CHECK(!fs::exists(mirror / "refs/heads/bad..name"));
    CHECK(!fs::exists(mirror / "refs/tags/junk"));
    CHECK(ref_of(mirror, "refs/heads/main") == sample.main.back());
}

TEST_CASE_FIXTURE(fixture, "a mirror that holds another repository is refused and nothing is written") {
    write_file(mirror / "fdl.json", "{\"fdl\":\"0.1\",\"id\":\"another-repository\"}\n");
    auto r = pass();
    REQUIRE(r.fatal);
    CHECK(r.fatal->code == sync_errc::repository_mismatch);
    CHECK(r.fatal->message.find("another-repository") != std::string::npos);
    CHECK(r.exit_code() == 1);
    CHECK(files_under(mirror) == std::vector<std::string>{"fdl.json"});
}

TEST_CASE_FIXTURE(fixture, "a folder with versions but no fdl.json is not adopted") {
    write_file(mirror / "versions" / sample.main.front() / "version.json", "{}");
    auto r = pass();
    REQUIRE(r.fatal);
    CHECK(r.fatal->code == sync_errc::repository_mismatch);
    CHECK(!fs::exists(mirror / "fdl.json"));
}

TEST_CASE_FIXTURE(fixture, "an origin of an unknown major version is refused with a clear error") {
    write_file(tmp / "origin" / "fdl.json", "{\"fdl\":\"1.0\",\"id\":\"x\"}");
    auto r = pass();
    REQUIRE(r.fatal);
    CHECK(r.fatal->code == fdl::fdl_errc::unknown_major_version);
    CHECK(r.fatal->message.find("origin: fdl.json: fdl: major version 1") != std::string::npos);
    CHECK(files_under(mirror).empty());
}

TEST_CASE_FIXTURE(fixture, "an origin without fdl.json is an I/O failure (exit 3)") {
    fs::remove(tmp / "origin" / "fdl.json");
    auto r = pass();
    REQUIRE(r.fatal);
    CHECK(r.exit_code() == 3);
    CHECK(r.fatal->message.find("fdl.json") != std::string::npos);
}

TEST_CASE_FIXTURE(fixture, "a data file the mirror already holds with another size blocks the version, and the mirror's is kept") {
    write_file(mirror / "data/main/population/ducklake-0004.parquet", "someone else's bytes");
    auto r = pass();
    CHECK(held_for(r, sample.dev_tip, sync_errc::data_file_conflict));
    CHECK(read_file(mirror / "data/main/population/ducklake-0004.parquet") == "someone else's bytes");
    expect_dev_held_and_main_mirrored(r);
}

TEST_CASE_FIXTURE(fixture, "a file in a version folder whose name no path check accepts is not copied") {
    write_file(dev_dir() / "bad\nname", "x");
    auto r = pass();
    INFO(describe(r));
    CHECK(r.exit_code() == 0);
    CHECK(!fs::exists(mirror / "versions" / sample.dev_tip / "bad\nname"));
    CHECK(std::any_of(r.warnings.begin(), r.warnings.end(),
                      [](auto const& w) { return w.find("control character") != std::string::npos; }));
}
