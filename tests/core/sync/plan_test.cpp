#include "core/sync/plan.hpp"
#include <doctest/doctest.h>

#include "core/sync/errors.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace mirror;
using namespace mirror::sync;

namespace {

constexpr char const* id = "019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c";
constexpr char const* folder = "versions/019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c/";

fdl::version_record sample_record() {
    auto r = fdl::parse_version_record(R"({
      "fdl": "0.1", "id": "019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c", "parents": [],
      "catalog": { "path": "ducklake.duckdb", "bytes": 4096,
                   "sha256": "9f2c000000000000000000000000000000000000000000000000000000000001" },
      "dataset": { "path": "dataset.json", "bytes": 200,
                   "sha256": "4c1d000000000000000000000000000000000000000000000000000000000002" },
      "files": { "path": "files.json", "bytes": 300,
                 "sha256": "7a0e000000000000000000000000000000000000000000000000000000000003" }
    })",
                                         "version.json");
    REQUIRE(r.has_value());
    return *r;
}

// The publication rule's rank of a step (plan.hpp, spec README): data files (and the
// mirror's ledger of them), catalog, dataset.json, files.json, catalogs/*, other files,
// version.json.sig, expired.json, version.json.
int rank_of(copy_step const& step) {
    std::string const& key = step.key;
    if (step.kind == step_kind::data_file)
        return 0;
    if (step.kind == step_kind::ledger)
        return 1;
    if (!key.starts_with(folder))
        return -1; // outside the version folder: wrong in any case
    std::string const path = key.substr(std::string(folder).size());
    if (path == "ducklake.duckdb")
        return 2;
    if (path == "dataset.json")
        return 3;
    if (path == "files.json")
        return 4;
    if (path.starts_with("catalogs/"))
        return 5;
    if (path == "version.json.sig")
        return 7;
    if (path == "expired.json")
        return 8;
    if (path == "version.json")
        return 9;
    return 6;
}

void check_publication_order(version_plan const& plan) {
    REQUIRE_FALSE(plan.steps.empty());
    for (std::size_t i = 0; i < plan.steps.size(); ++i) {
        CAPTURE(plan.steps[i].key);
        CHECK(rank_of(plan.steps[i]) >= 0);
        if (i > 0)
            CHECK(rank_of(plan.steps[i - 1]) <= rank_of(plan.steps[i]));
    }
    auto const& last = plan.steps.back();
    CHECK(last.key == std::string(folder) + "version.json");
    CHECK(last.kind == step_kind::record);
    CHECK_FALSE(last.optional);
    CHECK(std::count_if(plan.steps.begin(), plan.steps.end(),
                        [](copy_step const& s) { return s.kind == step_kind::record; }) == 1);
}

copy_step const* find_step(version_plan const& plan, std::string const& key) {
    for (auto const& s : plan.steps)
        if (s.key == key)
            return &s;
    return nullptr;
}

// The keys of the copy steps, without the mirror's own ledger step.
std::vector<std::string> keys_of(version_plan const& plan) {
    std::vector<std::string> keys;
    for (auto const& s : plan.steps)
        if (s.kind != step_kind::ledger)
            keys.push_back(s.key);
    return keys;
}

} // namespace

TEST_CASE("with a listing, every file is planned in the publication order") {
    auto record = sample_record();
    // Names chosen so that sorting by name would break the rule ("a-preview" < "catalogs/" <
    // "dataset.json" < "ducklake.duckdb" < "files.json").
    folder_files listing{{"a-preview.png", 10},       {"catalogs/1.0.duckdb", 4000}, {"catalogs/1.1.duckdb", 4010},
                         {"dataset.json", 200},       {"ducklake.duckdb", 4096},     {"files.json", 300},
                         {"version.json", 900},       {"version.json.sig", 500},     {"zz-notes.txt", 20}};
    version_inputs in{id, "data/", &record, {{"main/t/b.parquet", 20}, {"main/t/a.parquet", 10}}, &listing, {}, false};
    auto plan = plan_version(in, {});
    check_publication_order(plan);
    CHECK(plan.conflicts.empty());

    std::set<std::string> const expected{
        "data/main/t/a.parquet", "data/main/t/b.parquet", std::string(folder) + "ducklake.duckdb",
        std::string(folder) + "dataset.json", std::string(folder) + "files.json",
        std::string(folder) + "catalogs/1.0.duckdb", std::string(folder) + "catalogs/1.1.duckdb",
        std::string(folder) + "a-preview.png", std::string(folder) + "zz-notes.txt",
        std::string(folder) + "version.json.sig", std::string(folder) + "version.json"};
    auto keys = keys_of(plan);
    CHECK(keys.size() == expected.size()); // each once
    CHECK(std::set<std::string>(keys.begin(), keys.end()) == expected);
    CHECK(keys[keys.size() - 2] == std::string(folder) + "version.json.sig");
    for (auto const& s : plan.steps)
        CHECK_FALSE(s.optional); // the listing says what exists
}

TEST_CASE("steps carry the sizes and digests the repository pins") {
    auto record = sample_record();
    folder_files listing{{"ducklake.duckdb", 4096}, {"dataset.json", 200}, {"files.json", 300},
                         {"catalogs/1.0.duckdb", 4000}, {"version.json", 900}};
    version_inputs in{id, "lake/", &record, {{"main/t/a.parquet", 10}}, &listing, {}, false};
    auto plan = plan_version(in, {});

    auto const* data = find_step(plan, "lake/main/t/a.parquet");
    REQUIRE(data != nullptr);
    CHECK(data->kind == step_kind::data_file);
    CHECK(data->expect.bytes == std::optional<std::uint64_t>(10));

    auto const* catalog = find_step(plan, std::string(folder) + "ducklake.duckdb");
    REQUIRE(catalog != nullptr);
    CHECK(catalog->kind == step_kind::version_file);
    CHECK(catalog->expect.bytes == std::optional<std::uint64_t>(4096));
    REQUIRE(catalog->expect.sha256.has_value());
    CHECK(*catalog->expect.sha256 == record.catalog->sha256);

    auto const* files = find_step(plan, std::string(folder) + "files.json");
    REQUIRE(files != nullptr);
    REQUIRE(files->expect.sha256.has_value());
    CHECK(*files->expect.sha256 == record.files->sha256);

    auto const* other_format = find_step(plan, std::string(folder) + "catalogs/1.0.duckdb");
    REQUIRE(other_format != nullptr);
    CHECK(other_format->expect.bytes == std::optional<std::uint64_t>(4000));
    CHECK(find_step(plan, std::string(folder) + "version.json.sig") == nullptr); // not listed, not planned
}

TEST_CASE("data files the mirror already holds are skipped, or are a conflict at another size") {
    auto record = sample_record();
    folder_files listing{{"ducklake.duckdb", 4096}, {"dataset.json", 200}, {"files.json", 300}};
    version_inputs in{id, "data/", &record, {{"a.parquet", 10}, {"b.parquet", 20}, {"c.parquet", 30}}, &listing,
                      {}, false};
    sync::path_sizes mirror_data;
    for (auto const& [path, size] : std::map<std::string, std::uint64_t>{{"b.parquet", 20}, {"c.parquet", 31}, {"z.parquet", 1}})
        mirror_data.add(path, size);
    auto plan = plan_version(in, mirror_data);
    check_publication_order(plan);

    CHECK(find_step(plan, "data/a.parquet") != nullptr);
    CHECK(find_step(plan, "data/b.parquet") == nullptr); // same size: already there
    CHECK(find_step(plan, "data/c.parquet") == nullptr); // never overwritten
    CHECK(find_step(plan, "data/z.parquet") == nullptr); // not this version's
    REQUIRE(plan.conflicts.size() == 1);
    CHECK(plan.conflicts[0].code == make_error_code(sync_errc::data_file_conflict));
    CHECK(plan.conflicts[0].message.find("c.parquet") != std::string::npos);
}

TEST_CASE("a live version's pinned files are required even when the listing lacks them") {
    auto record = sample_record();
    folder_files listing{{"dataset.json", 200}, {"version.json", 900}};
    version_inputs in{id, "data/", &record, {}, &listing, {}, false};
    auto plan = plan_version(in, {});
    check_publication_order(plan);
    for (auto const* path : {"ducklake.duckdb", "dataset.json", "files.json"}) {
        CAPTURE(path);
        auto const* step = find_step(plan, std::string(folder) + path);
        REQUIRE(step != nullptr);
        CHECK_FALSE(step->optional); // absent at the origin must hold the version
    }
}

TEST_CASE("without a listing, the signature and other catalog formats are optional probes") {
    auto record = sample_record();
    version_inputs in{id, "data/", &record, {{"a.parquet", 10}}, nullptr, {"1.0", "1.1"}, false};
    auto plan = plan_version(in, {});
    check_publication_order(plan);

    for (auto const* path : {"ducklake.duckdb", "dataset.json", "files.json"}) {
        CAPTURE(path);
        auto const* step = find_step(plan, std::string(folder) + path);
        REQUIRE(step != nullptr);
        CHECK_FALSE(step->optional);
    }
    for (auto const* path : {"catalogs/1.0.duckdb", "catalogs/1.1.duckdb", "version.json.sig"}) {
        CAPTURE(path);
        auto const* step = find_step(plan, std::string(folder) + path);
        REQUIRE(step != nullptr);
        CHECK(step->optional);
    }
    CHECK(find_step(plan, std::string(folder) + "expired.json") == nullptr);
    CHECK(find_step(plan, "data/a.parquet") != nullptr);
    CHECK(keys_of(plan).size() == 8);
}

TEST_CASE("an expired version plans no catalog and ends with expired.json, then version.json") {
    auto record = sample_record();
    // At the origin, the catalog and files.json are gone; dataset.json and a preview remain.
    folder_files listing{{"dataset.json", 200}, {"expired.json", 30}, {"preview.png", 5}, {"version.json", 900}};
    version_inputs in{id, "data/", &record, {{"a.parquet", 10}}, &listing, {"1.0"}, true};
    auto plan = plan_version(in, {});
    check_publication_order(plan);

    CHECK(find_step(plan, std::string(folder) + "ducklake.duckdb") == nullptr);
    CHECK(find_step(plan, std::string(folder) + "files.json") == nullptr);
    CHECK(find_step(plan, std::string(folder) + "catalogs/1.0.duckdb") == nullptr);
    CHECK(find_step(plan, std::string(folder) + "dataset.json") != nullptr);
    CHECK(find_step(plan, std::string(folder) + "preview.png") != nullptr);
    CHECK(find_step(plan, "data/a.parquet") != nullptr); // data files stay
    REQUIRE(plan.steps.size() >= 2);
    CHECK(plan.steps[plan.steps.size() - 2].key == std::string(folder) + "expired.json");
    CHECK_FALSE(plan.steps[plan.steps.size() - 2].optional);
}

TEST_CASE("an expired version without a listing probes no catalog formats and requires no catalog") {
    auto record = sample_record();
    version_inputs in{id, "data/", &record, {}, nullptr, {"1.0", "1.1"}, true};
    auto plan = plan_version(in, {});
    check_publication_order(plan);
    for (auto const& s : plan.steps) {
        CAPTURE(s.key);
        CHECK(s.key.find("/catalogs/") == std::string::npos);
        if (s.key.ends_with("/ducklake.duckdb") || s.key.ends_with("/files.json") || s.key.ends_with("/dataset.json"))
            CHECK(s.optional); // the origin may have deleted it
    }
    REQUIRE(plan.steps.size() >= 2);
    CHECK(plan.steps[plan.steps.size() - 2].key == std::string(folder) + "expired.json");
}

TEST_CASE("a withdrawn record without pinned files still plans its record last") {
    auto r = fdl::parse_version_record(R"({"fdl":"0.1","id":"019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c"})", "version.json");
    REQUIRE(r.has_value());
    folder_files listing{{"expired.json", 30}, {"version.json", 100}};
    version_inputs in{id, "data/", &*r, {}, &listing, {}, true};
    auto plan = plan_version(in, {});
    check_publication_order(plan);
    CHECK(keys_of(plan) == std::vector<std::string>{std::string(folder) + "expired.json",
                                                     std::string(folder) + "version.json"});
}
