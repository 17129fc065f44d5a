// fdl-mirror verify: the audit of a repository, origin or mirror.

#include "core/sync/audit.hpp"

#include "tests/component/helpers.hpp"
#include "tests/support/run.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

#include <set>

using namespace mirror;
using namespace mirror::test;
namespace fs = std::filesystem;

namespace {

sync::version_audit const* find(sync::audit_report const& r, std::string const& id) {
    for (auto const& v : r.versions)
        if (v.id == id)
            return &v;
    return nullptr;
}

bool has_problem(sync::version_audit const& v, std::string const& text) {
    return std::any_of(v.problems.begin(), v.problems.end(),
                       [&](auto const& p) { return p.message.find(text) != std::string::npos; });
}

} // namespace

TEST_CASE("an audit visits every version reachable from the refs, and says which refs reach it") {
    temp_dir tmp;
    publisher origin(tmp / "origin");
    auto sample = publish_sample(origin);
    auto r = audit_folder(tmp / "origin");
    CHECK(r.exit_code() == 0);
    CHECK(r.versions.size() == 4);
    auto const* root = find(r, sample.main.front());
    REQUIRE(root != nullptr);
    std::set<std::string> refs(root->reached_from.begin(), root->reached_from.end());
    CHECK(refs == std::set<std::string>{"refs/heads/dev", "refs/heads/main", "refs/tags/v1"});
    auto const* second = find(r, sample.main[1]);
    REQUIRE(second != nullptr);
    CHECK(second->data_files == 3);
    CHECK(second->tables == 2);
    CHECK(second->data_bytes == 3000 + 5000 + 700);
}

TEST_CASE("an audit names each damage precisely") {
    temp_dir tmp;
    publisher origin(tmp / "origin");
    auto sample = publish_sample(origin);
    auto dir = [&](std::string const& id) { return origin.version_dir(id); };
    fs::remove(origin.data_path("main/population/ducklake-0004.parquet"));       // dev's data file
    write_file(dir(sample.main[2]) / "ducklake.duckdb", "altered catalog");       // size differs
    auto record = read_file(dir(sample.main[1]) / "version.json");
    write_file(dir(sample.main[1]) / "version.json", record.substr(0, 40));      // truncated
    auto r = audit_folder(tmp / "origin");
    CHECK(r.exit_code() == 1);
    REQUIRE(find(r, sample.dev_tip));
    CHECK(has_problem(*find(r, sample.dev_tip), "ducklake-0004.parquet: missing"));
    CHECK(has_problem(*find(r, sample.main[2]), "ducklake.duckdb: size is 15 bytes"));
    CHECK(has_problem(*find(r, sample.main[1]), "version.json: not valid JSON"));
    // Past the broken record, main's history is lost; the tag v1 still reaches the root.
    REQUIRE(find(r, sample.main.front()));
    CHECK(find(r, sample.main.front())->problems.empty());
    CHECK(find(r, sample.main.front())->reached_from == std::vector<std::string>{"refs/tags/v1"});
}

TEST_CASE("an audit checks HEAD and refs.json against the refs") {
    temp_dir tmp;
    publisher origin(tmp / "origin");
    auto sample = publish_sample(origin);
    write_file(tmp / "origin" / "HEAD", "ref: refs/heads/gone\n");
    write_file(tmp / "origin" / "refs.json", "{\"refs\":{\"refs/heads/main\":\"" + sample.dev_tip + "\"}}");
    auto r = audit_folder(tmp / "origin");
    CHECK(r.exit_code() == 1);
    auto mentions = [&](std::string const& text) {
        return std::any_of(r.problems.begin(), r.problems.end(),
                           [&](auto const& p) { return p.message.find(text) != std::string::npos; });
    };
    CHECK(mentions("HEAD: names refs/heads/gone"));
    CHECK(mentions("refs.json says refs/heads/main is " + sample.dev_tip));
    CHECK(mentions("refs.json lacks refs/tags/v1"));
}

TEST_CASE("an audit of first parents that form a cycle stops and says so") {
    temp_dir tmp;
    publisher origin(tmp / "origin");
    origin.add_data_file("main/t/a.parquet", "a");
    version_options first;
    first.data_files = {"main/t/a.parquet"};
    auto a = origin.add_version(first);
    version_options second = first;
    second.parent = a;
    auto b = origin.add_version(second);
    // a's record now names b as its parent: a -> b -> a.
    auto record = read_file(origin.version_dir(a) / "version.json");
    auto pos = record.find("\"parents\":[]");
    REQUIRE(pos != std::string::npos);
    record.replace(pos, 12, "\"parents\":[\"" + b + "\"]");
    write_file(origin.version_dir(a) / "version.json", record);
    origin.set_branch("main", b);
    origin.set_tag("t", a);
    origin.set_head("main");
    origin.write_refs_json();
    auto r = audit_folder(tmp / "origin"); // must return: the test would hang otherwise
    CHECK(r.exit_code() == 1);
    CHECK(r.versions.size() == 2);
    CHECK(std::any_of(r.problems.begin(), r.problems.end(),
                      [](auto const& p) { return p.message.find("parents form a cycle") != std::string::npos; }));
}
