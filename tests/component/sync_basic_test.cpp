// A first pass, a rerun, and a new version: the mirror is a byte-for-byte copy.

#include "core/sync/sync_pass.hpp"

#include "tests/component/helpers.hpp"
#include "tests/support/counting_store.hpp"
#include "tests/support/run.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

#include <set>

using namespace mirror;
using namespace mirror::test;
namespace fs = std::filesystem;

TEST_CASE("a first pass copies every version, ref and HEAD byte for byte") {
    temp_dir tmp;
    publisher origin(tmp / "origin");
    auto sample = publish_sample(origin);
    write_file(tmp / "origin" / "refs" / "requests" / "7", sample.main.back() + "\n");
    write_file(tmp / "origin" / "notes.txt", "a root file with another name");

    auto report = sync_folders(tmp / "origin", tmp / "mirror");
    INFO(describe(report));
    CHECK(report.exit_code() == 0);
    CHECK(report.published.size() == 4);
    CHECK(report.published.front() == sample.main.front()); // oldest first
    CHECK(report.held.empty());
    CHECK(report.violations.empty());

    auto origin_files = files_under(tmp / "origin");
    std::vector<std::string> mirror_files;
    for (auto const& f : files_under(tmp / "mirror"))
        if (!f.starts_with(".fdl-mirror/")) // the mirror's own ledger; readers ignore it
            mirror_files.push_back(f);
    // refs/requests/* and unknown root files are the host's own; the mirror writes its own refs.json.
    std::vector<std::string> expected;
    for (auto const& f : origin_files)
        if (!f.starts_with("refs/requests/") && f != "notes.txt")
            expected.push_back(f);
    CHECK(mirror_files == expected);
    for (auto const& f : expected)
        if (f != "refs.json")
            CHECK_MESSAGE(read_file(tmp / "mirror" / f) == read_file(tmp / "origin" / f), f);
    CHECK(reader_visible_problems(tmp / "mirror").empty());
    CHECK(audit_folder(tmp / "mirror").exit_code() == 0);
}

TEST_CASE("a rerun against an unchanged origin copies nothing and reads only refs and tips") {
    temp_dir tmp;
    publisher origin(tmp / "origin");
    auto sample = publish_sample(origin);
    REQUIRE(sync_folders(tmp / "origin", tmp / "mirror").exit_code() == 0);

    auto origin_folder = open_folder(tmp / "origin", false);
    auto mirror_folder = open_folder(tmp / "mirror", true);
    counting_store from(*origin_folder);
    counting_store to(*mirror_folder);
    auto report = sync_stores(from, to);
    INFO(describe(report));
    CHECK(report.exit_code() == 0);
    CHECK(report.files_copied == 0);
    CHECK(to.writes.empty());

    // The documented cost of a poll (docs/cli.md): per side fdl.json, HEAD, refs.json,
    // each ref, the version.json of each distinct ref tip, and two listings; on the
    // mirror's side, the record a partial mirror keeps (absent here).
    std::set<std::string> tips = {sample.main.back(), sample.dev_tip, sample.main.front()};
    std::multiset<std::string> expected_reads = {"fdl.json", "HEAD", "refs.json", "refs/heads/dev", "refs/heads/main",
                                                 "refs/tags/v1"};
    for (auto const& id : tips)
        expected_reads.insert("versions/" + id + "/version.json");
    CHECK(std::multiset<std::string>(from.reads.begin(), from.reads.end()) == expected_reads);
    expected_reads.insert(".fdl-mirror/partial");
    CHECK(std::multiset<std::string>(to.reads.begin(), to.reads.end()) == expected_reads);
    CHECK(std::multiset<std::string>(from.lists.begin(), from.lists.end()) ==
          std::multiset<std::string>{"refs/", "versions/"});
    CHECK(std::multiset<std::string>(to.lists.begin(), to.lists.end()) ==
          std::multiset<std::string>{"refs/", "versions/"});
    CHECK(from.stats.empty());
}

TEST_CASE("a new version is published on the next pass and the branch moves forward") {
    temp_dir tmp;
    publisher origin(tmp / "origin");
    auto sample = publish_sample(origin);
    REQUIRE(sync_folders(tmp / "origin", tmp / "mirror").exit_code() == 0);

    origin.add_data_file("main/towns/ducklake-0005.parquet", std::string(900, 'e'));
    version_options next;
    next.parent = sample.main.back();
    next.data_files = {"main/towns/ducklake-0003.parquet", "main/towns/ducklake-0005.parquet"};
    auto id = origin.add_version(next);
    origin.set_branch("main", id);
    origin.write_refs_json();

    auto report = sync_folders(tmp / "origin", tmp / "mirror");
    INFO(describe(report));
    CHECK(report.exit_code() == 0);
    CHECK(report.published == std::vector<std::string>{id});
    // Only the new data file, the version's files and the refs: shared data is not copied again.
    CHECK(report.files_copied == 1 + 4);
    REQUIRE(report.refs_updated.size() == 1);
    CHECK(report.refs_updated[0].name == "refs/heads/main");
    CHECK(report.refs_updated[0].from == sample.main.back());
    CHECK(ref_of(tmp / "mirror", "refs/heads/main") == id);
    CHECK(reader_visible_problems(tmp / "mirror").empty());
}

TEST_CASE("a custom data_dir and versions without files.json are mirrored from a listing") {
    temp_dir tmp;
    repo_options options;
    options.data_dir = "lake/files/";
    publisher origin(tmp / "origin", options);
    origin.add_data_file("main/t/ducklake-1.parquet", "one");
    origin.add_data_file("main/t/ducklake-2.parquet", "two two");
    version_options v;
    v.data_files = {"main/t/ducklake-1.parquet", "main/t/ducklake-2.parquet"};
    v.files_json = false;
    auto id = origin.add_version(v);
    origin.set_branch("main", id);
    origin.set_head("main");
    origin.write_refs_json();

    auto report = sync_folders(tmp / "origin", tmp / "mirror");
    INFO(describe(report));
    CHECK(report.exit_code() == 0);
    CHECK(read_file(tmp / "mirror" / "lake/files/main/t/ducklake-2.parquet") == "two two");
    CHECK(ref_of(tmp / "mirror", "refs/heads/main") == id);
}

TEST_CASE("the mirror's refs.json lists the refs it holds, and HEAD is written last") {
    temp_dir tmp;
    publisher origin(tmp / "origin");
    auto sample = publish_sample(origin);
    REQUIRE(sync_folders(tmp / "origin", tmp / "mirror").exit_code() == 0);
    auto refs = boost::json::parse(read_file(tmp / "mirror" / "refs.json")).as_object();
    CHECK(refs.at("HEAD").as_string() == "ref: refs/heads/main");
    auto const& listed = refs.at("refs").as_object();
    CHECK(listed.size() == 3);
    CHECK(listed.at("refs/heads/dev").as_string() == sample.dev_tip);
    CHECK(listed.at("refs/tags/v1").as_string() == sample.main.front());
    CHECK(read_file(tmp / "mirror" / "HEAD") == "ref: refs/heads/main\n");
}
