// The reader computes in C++ what the spec's SQL computes (spec/ducklake-sql, copied into
// tests/data/ducklake-sql): on catalogs generated at random, the files it needs at the
// last snapshot are the live-file query's, and the files it refuses as outside data_dir
// are those the query leaves without a relative path.

#include "core/catalog/catalog_reader.hpp"
#include <doctest/doctest.h>

#include "core/catalog/duckdb_session.hpp"
#include "core/catalog/errors.hpp"
#include "tests/support/ducklake_writer.hpp"
#include "tests/support/temp_dir.hpp"

#include <random>
#include <algorithm>
#include <set>

using namespace mirror;
using namespace mirror::catalog;
using namespace mirror::test;
namespace fs = std::filesystem;

namespace {

std::string live_files_query(std::uint64_t snapshot) {
    std::string sql = spec_query("10_live_files.sql", std::to_string(snapshot));
    REQUIRE_MESSAGE(!sql.empty(), "the spec's queries (tests/data/ducklake-sql) cannot be read");
    return sql;
}

/// A catalog of up to three schemas and five tables whose levels are relative or absolute
/// (inside data_path or elsewhere), with files and deletes that begin and end at random
/// snapshots among 0-4, and tables that end too.
catalog_model random_model(std::mt19937& random) {
    auto pick = [&](int n) { return static_cast<int>(random() % static_cast<unsigned>(n)); };
    catalog_model m;
    m.format = pick(2) == 0 ? "0.3" : "1.0";
    m.data_path = "s3://origin.example/repo/data/";
    m.snapshots = {0, 1, 2, 3, 4};
    auto level = [&](std::string const& name, bool& relative) {
        switch (pick(5)) {
        case 0: relative = false; return m.data_path + name + "/";   // absolute, inside data_path
        case 1: relative = false; return "s3://elsewhere.example/" + name + "/";
        default: relative = true; return pick(2) == 0 ? std::string() : name + "-dir/";
        }
    };
    m.schemas.clear();
    int schemas = 1 + pick(3);
    for (int s = 0; s < schemas; ++s) {
        model_schema schema{.name = s == 0 ? "main" : "s" + std::to_string(s)};
        schema.path = level(schema.name, schema.relative);
        m.schemas.push_back(schema);
    }
    std::uint64_t id = 0;
    int tables = 1 + pick(5);
    for (int t = 0; t < tables; ++t) {
        model_table table{.schema = m.schemas[pick(schemas)].name, .name = "t" + std::to_string(t)};
        table.path = level(table.name, table.relative);
        table.columns = {{1, "id"}};
        if (pick(4) == 0)
            table.end = 2 + pick(3);
        int files = pick(6);
        for (int f = 0; f < files; ++f) {
            model_file file{.path = "f" + std::to_string(++id) + ".parquet", .rows = 1 + id, .bytes = 100 + id};
            if (pick(4) == 0) {
                file.relative = false;
                file.path = (pick(2) == 0 ? m.data_path + "abs/" : "/elsewhere/") + file.path;
            }
            file.begin = 1 + pick(3);
            if (pick(3) == 0)
                file.end = file.begin + 1 + pick(3);
            if (pick(3) == 0)
                file.deletes = model_delete{.path = "d" + std::to_string(id) + ".parquet", .rows = 1, .bytes = 50 + id,
                                            .begin = file.begin};
            table.files.push_back(file);
        }
        m.tables.push_back(table);
    }
    return m;
}

} // namespace

TEST_CASE("the reader needs exactly the files the spec's live-file query finds, on 60 random catalogs") {
    std::mt19937 random(20261201);
    for (int round = 0; round < 60; ++round) {
        CAPTURE(round);
        temp_dir tmp;
        auto model = random_model(random);
        write_catalog(tmp / "c.duckdb", model);

        std::set<std::pair<std::string, std::uint64_t>> spec_needed;
        std::size_t spec_outside = 0;
        {
            auto session = duckdb_session::open(tmp / "c.duckdb", {});
            REQUIRE(session.has_value());
            auto live = (*session)->query(live_files_query(model.snapshots.back()));
            REQUIRE_MESSAGE(live.has_value(), (live ? "" : live.error().message));
            for (auto const& row : live->rows) {
                auto const& rel = row[live->column("rel_path")];
                if (!rel)
                    ++spec_outside;
                else if (row[live->column("table_name")])
                    spec_needed.emplace(*rel, std::stoull(*row[live->column("file_size_bytes")]));
            }
        }
        auto contents = read_catalog(tmp / "c.duckdb", "c");
        REQUIRE_MESSAGE(contents.has_value(), (contents ? "" : contents.error().message));
        std::set<std::pair<std::string, std::uint64_t>> needed;
        for (auto const& f : contents->needed)
            needed.emplace(f.path, f.bytes);
        // The spec's query takes an absolute path inside data_path; this reader refuses it
        // (catalog.absolute_path), naming its full path, and with a data file refused, its
        // delete file applies to no live data file: together they are the spec's.
        std::set<std::string> spec_paths, found_paths;
        for (auto const& [path, bytes] : spec_needed)
            spec_paths.insert(path);
        for (auto const& [path, bytes] : needed)
            found_paths.insert(path);
        std::size_t outside = 0;
        for (auto const& p : contents->problems) {
            outside += p.code == catalog_errc::outside_data_dir ? 1 : 0;
            std::string const orphan = "c: delete file '";
            if (p.code == catalog_errc::bad_catalog && p.message.starts_with(orphan))
                found_paths.insert(p.message.substr(orphan.size(), p.message.find('\'', orphan.size()) - orphan.size()));
            if (p.code != catalog_errc::absolute_path)
                continue;
            auto open = p.message.find('\'');
            auto full = p.message.substr(open + 1, p.message.find('\'', open + 1) - open - 1);
            REQUIRE(full.starts_with(model.data_path));
            found_paths.insert(full.substr(model.data_path.size()));
        }
        CHECK(std::includes(spec_needed.begin(), spec_needed.end(), needed.begin(), needed.end()));
        CHECK(found_paths == spec_paths);
        CHECK(outside == spec_outside);
    }
}
