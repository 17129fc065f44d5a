// Multi-pass: the origin changes between passes. Allowed changes are followed; broken
// promises are violations and the mirror keeps its copy.

#include "core/sync/sync_pass.hpp"

#include "tests/component/helpers.hpp"
#include "tests/support/run.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

using namespace mirror;
using namespace mirror::test;
using sync::sync_errc;
namespace fs = std::filesystem;

namespace {

struct mirrored {
    temp_dir tmp;
    publisher origin{tmp / "origin"};
    sample_repo sample = publish_sample(origin);
    fs::path mirror = tmp / "mirror";

    mirrored() { REQUIRE(pass().exit_code() == 0); }
    sync::sync_report pass(sync::sync_options options = {}) { return sync_folders(tmp / "origin", mirror, options); }
    fs::path mirror_dir(std::string const& id) const { return mirror / "versions" / id; }
};

} // namespace

TEST_CASE_FIXTURE(mirrored, "a moved tag is a violation and the mirror keeps its tag") {
    origin.set_tag("v1", sample.main.back());
    auto r = pass();
    INFO(describe(r));
    CHECK(violated(r, sync_errc::tag_moved, "refs/tags/v1"));
    CHECK(r.exit_code() == 1);
    CHECK(ref_of(mirror, "refs/tags/v1") == sample.main.front());
}

TEST_CASE_FIXTURE(mirrored, "a rewound branch is held unless rewinds are allowed") {
    origin.set_branch("dev", sample.main[1]); // dev's mirror copy is ahead: not a descendant
    auto held = pass();
    INFO(describe(held));
    CHECK(violated(held, sync_errc::branch_rewound, "refs/heads/dev"));
    CHECK(ref_of(mirror, "refs/heads/dev") == sample.dev_tip);

    sync::sync_options allow;
    allow.allow_rewind = true;
    auto followed = pass(allow);
    INFO(describe(followed));
    CHECK(followed.exit_code() == 0);
    CHECK(ref_of(mirror, "refs/heads/dev") == sample.main[1]);
}

TEST_CASE_FIXTURE(mirrored, "a branch moved to a version on another line of history is a rewind") {
    version_options side;
    side.parent = sample.main.front();
    side.data_files = {"main/population/ducklake-0001.parquet"};
    auto fork = origin.add_version(side);
    origin.set_branch("main", fork);
    auto r = pass();
    INFO(describe(r));
    CHECK(violated(r, sync_errc::branch_rewound, "refs/heads/main"));
    CHECK(r.published == std::vector<std::string>{fork}); // the version itself is mirrored
    CHECK(ref_of(mirror, "refs/heads/main") == sample.main.back());
}

TEST_CASE_FIXTURE(mirrored, "expiry is followed: the mark is added, catalog and files.json go, data stays") {
    auto id = sample.main.front();
    origin.expire(id, false);
    auto r = pass();
    INFO(describe(r));
    CHECK(r.exit_code() == 0);
    CHECK(r.followed.size() == 1);
    CHECK(read_file(mirror_dir(id) / "expired.json") == read_file(origin.version_dir(id) / "expired.json"));
    CHECK(!fs::exists(mirror_dir(id) / "ducklake.duckdb"));
    CHECK(!fs::exists(mirror_dir(id) / "files.json"));
    CHECK(fs::exists(mirror_dir(id) / "version.json"));
    CHECK(fs::exists(mirror / "data/main/population/ducklake-0001.parquet"));
    CHECK(reader_visible_problems(mirror).empty());
    CHECK(audit_folder(mirror).exit_code() == 0);
    // Nothing more to do on the next pass.
    auto again = pass();
    CHECK(again.exit_code() == 0);
    CHECK(again.files_copied == 0);
    CHECK(again.violations.empty());
}

TEST_CASE_FIXTURE(mirrored, "a withdrawal also takes the origin's reduced version.json") {
    auto id = sample.main[1];
    origin.expire(id, true);
    auto r = pass();
    INFO(describe(r));
    CHECK(r.exit_code() == 0);
    CHECK(read_file(mirror_dir(id) / "version.json") == read_file(origin.version_dir(id) / "version.json"));
    CHECK(read_file(mirror_dir(id) / "version.json").find("\"message\"") == std::string::npos);
    CHECK(!fs::exists(mirror_dir(id) / "ducklake.duckdb"));
    CHECK(pass().exit_code() == 0);
}

TEST_CASE_FIXTURE(mirrored, "a late signature and a late catalog format are added to a published version") {
    auto id = sample.main.back();
    origin.add_signature_placeholder(id);
    origin.add_late_catalog(id, "1.1");
    auto r = pass();
    INFO(describe(r));
    CHECK(r.exit_code() == 0);
    CHECK(r.followed.size() == 2);
    CHECK(read_file(mirror_dir(id) / "version.json.sig") == read_file(origin.version_dir(id) / "version.json.sig"));
    CHECK(read_file(mirror_dir(id) / "catalogs" / "1.1.duckdb") ==
          read_file(origin.version_dir(id) / "catalogs" / "1.1.duckdb"));
}

TEST_CASE_FIXTURE(mirrored, "rewritten files of published versions are violations, and the mirror keeps its copy") {
    auto tip = sample.main.back();
    auto old = sample.main.front();
    auto tip_record = read_file(origin.version_dir(tip) / "version.json");
    auto kept_record = read_file(mirror_dir(tip) / "version.json");
    auto pos = tip_record.find("\"third\"");
    REQUIRE(pos != std::string::npos);
    tip_record.replace(pos, 7, "\"THIRD\""); // same size, other bytes
    write_file(origin.version_dir(tip) / "version.json", tip_record);
    write_file(origin.version_dir(old) / "ducklake.duckdb", "a different catalog");
    auto r = pass();
    INFO(describe(r));
    CHECK(violated(r, sync_errc::version_rewritten, "versions/" + tip + "/version.json"));
    CHECK(violated(r, sync_errc::version_rewritten, "versions/" + old + "/ducklake.duckdb"));
    CHECK(r.exit_code() == 1);
    CHECK(read_file(mirror_dir(tip) / "version.json") == kept_record);
    CHECK(reader_visible_problems(mirror).empty());
}

TEST_CASE_FIXTURE(mirrored, "files added to or deleted from a published version at the origin are reported") {
    auto id = sample.main[1];
    write_file(origin.version_dir(id) / "preview.png", "added later");
    fs::remove(origin.version_dir(id) / "dataset.json");
    auto r = pass();
    INFO(describe(r));
    CHECK(violated(r, sync_errc::file_added_at_origin, "preview.png"));
    CHECK(violated(r, sync_errc::file_deleted_at_origin, "dataset.json"));
    CHECK(!fs::exists(mirror_dir(id) / "preview.png"));
    CHECK(fs::exists(mirror_dir(id) / "dataset.json"));
}

TEST_CASE("a version already expired at the origin is mirrored as it is there") {
    temp_dir tmp;
    publisher origin(tmp / "origin");
    auto sample = publish_sample(origin);
    origin.expire(sample.main.front(), false);
    auto r = sync_folders(tmp / "origin", tmp / "mirror");
    INFO(describe(r));
    CHECK(r.exit_code() == 0);
    auto dir = tmp / "mirror" / "versions" / sample.main.front();
    CHECK(files_under(dir) == std::vector<std::string>{"dataset.json", "expired.json", "version.json"});
    CHECK(ref_of(tmp / "mirror", "refs/tags/v1") == sample.main.front());
    CHECK(reader_visible_problems(tmp / "mirror").empty());
}

TEST_CASE_FIXTURE(mirrored, "fdl.json changed at the origin (same id and data_dir) is a violation, the mirror keeps its copy") {
    std::string const before = read_file(mirror / "fdl.json");
    auto settings = boost::json::parse(read_file(tmp / "origin" / "fdl.json")).as_object();
    settings["description"] = "rewritten after the mirror copied it";
    write_file(tmp / "origin" / "fdl.json", boost::json::serialize(settings));
    auto r = pass();
    INFO(describe(r));
    CHECK(violated(r, sync_errc::fdl_json_changed, "fdl.json"));
    CHECK(r.exit_code() == 1);
    CHECK(read_file(mirror / "fdl.json") == before);
    CHECK(ref_of(mirror, "refs/heads/main") == sample.main.back()); // the rest is mirrored as before
}

TEST_CASE_FIXTURE(mirrored, "a branch deleted at the origin stays in the mirror, with a warning") {
    fs::remove(tmp / "origin" / "refs" / "heads" / "dev");
    origin.write_refs_json();
    auto r = pass();
    CHECK(r.exit_code() == 0);
    CHECK(ref_of(mirror, "refs/heads/dev") == sample.dev_tip);
    CHECK(std::any_of(r.warnings.begin(), r.warnings.end(),
                      [](auto const& w) { return w.find("refs/heads/dev: gone from the origin") != std::string::npos; }));
}

TEST_CASE_FIXTURE(mirrored, "refs.json disagreeing with refs/ at a listable origin is reported, refs/ wins") {
    write_file(tmp / "origin" / "refs.json", "{\"refs\":{\"refs/heads/main\":\"" + sample.main.front() + "\"}}");
    auto r = pass();
    CHECK(r.exit_code() == 0);
    CHECK(ref_of(mirror, "refs/heads/main") == sample.main.back());
    CHECK(std::any_of(r.warnings.begin(), r.warnings.end(),
                      [](auto const& w) { return w.find("refs.json says refs/heads/main") != std::string::npos; }));
}

TEST_CASE_FIXTURE(mirrored, "a withdrawal that changes version.json beyond removing fields is a violation") {
    auto id = sample.main[1];
    origin.expire(id, true);
    auto record = read_file(origin.version_dir(id) / "version.json");
    auto pos = record.find("\"seq\":2");
    REQUIRE(pos != std::string::npos);
    record.replace(pos, 7, "\"seq\":9");
    write_file(origin.version_dir(id) / "version.json", record);
    auto kept = read_file(mirror_dir(id) / "version.json");
    auto r = pass();
    INFO(describe(r));
    CHECK(violated(r, sync_errc::version_rewritten, "beyond removing withdrawn fields"));
    CHECK(read_file(mirror_dir(id) / "version.json") == kept);
    CHECK(fs::exists(mirror_dir(id) / "expired.json")); // the withdrawal itself is followed
    CHECK(!fs::exists(mirror_dir(id) / "ducklake.duckdb"));
}

TEST_CASE_FIXTURE(mirrored, "a tag moved to a version that is held is still reported") {
    version_options bad;
    bad.parent = sample.main.back();
    bad.data_files = {"main/population/ducklake-0001.parquet"};
    auto id = origin.add_version(bad);
    write_file(origin.version_dir(id) / "ducklake.duckdb", "tampered after version.json was written");
    origin.set_tag("v1", id);
    auto r = pass();
    INFO(describe(r));
    CHECK(held_for(r, id, sync_errc::size_mismatch));
    CHECK(violated(r, sync_errc::tag_moved, "refs/tags/v1"));
    CHECK(ref_of(mirror, "refs/tags/v1") == sample.main.front());
}

TEST_CASE_FIXTURE(mirrored, "the report counts the versions the mirror holds") {
    auto r = pass();
    REQUIRE(r.versions_in_mirror);
    CHECK(*r.versions_in_mirror == 4);
}
