// Hostile catalogs (built with DuckDB only): a frozen catalog is a DuckDB database the
// origin writes, so it can hold any SQL object. The gate reads only base tables, never
// lets the catalog's objects into its own queries, and refuses every object the DuckLake
// format does not define. Each catalog here is a real DuckDB file, made in the test.

#include "core/catalog/errors.hpp"
#include "core/catalog/sandboxed_reader.hpp"
#include "core/sync/sync_pass.hpp"

#include "tests/component/catalog_helpers.hpp"
#include "verify/sha256.hpp"

#include <doctest/doctest.h>

#include <cstdlib>

using namespace mirror;
using namespace mirror::test;
using catalog::catalog_errc;
namespace fs = std::filesystem;

namespace {

/// SQL that replaces `table` by a view of the same rows, as a catalog lying to one
/// reader and not another would.
std::string view_in_place_of(std::string const& table) {
    return "ALTER TABLE " + table + " RENAME TO " + table + "_honest; CREATE VIEW " + table + " AS SELECT * FROM " +
           table + "_honest";
}

/// Rewrites towns' data file to an absolute path on another host whose prefix is as long
/// as data_path, so that cutting data_path off leaves an honest-looking relative path.
std::string const evil_path_sql =
    "UPDATE ducklake_data_file SET path = rpad('s3://evil.example/', CAST(length((SELECT value FROM ducklake_metadata "
    "WHERE key = 'data_path')) AS INTEGER), 'x') || 'main/towns/ducklake-3.parquet', path_is_relative = false "
    "WHERE path = 'ducklake-3.parquet'";

} // namespace

TEST_CASE_FIXTURE(lake_origin, "a macro that shadows a function of the gate's queries does not get a foreign file "
                               "published") {
    // The attack as it was reported: with the catalog the session's default database, the
    // macro replaced DuckDB's starts_with in the gate's own query, and the version published.
    auto tip = add_tip([](version_options& v) {
        v.files_json = false;
        v.edit_catalog = [](catalog_model& m) {
            m.extra_sql = {evil_path_sql,
                           "CREATE MACRO starts_with(a, b) AS (a LIKE 's3://evil%') OR prefix(a, b)"};
        };
    });
    auto r = pass();
    INFO(describe(r));
    CHECK(r.exit_code() == 1);
    CHECK(held_because(r, tip, catalog_errc::foreign_object, "macro main.starts_with"));
    CHECK(!fs::exists(mirror / "versions" / tip / "version.json"));
    CHECK(ref_of(mirror, "refs/heads/main") == "");
    auto audit = audit_folder(tmp / "origin");
    INFO(problems_of(audit));
    CHECK(audit_finds(audit, tip, catalog_errc::foreign_object, "macro main.starts_with"));
}

TEST_CASE_FIXTURE(lake_origin, "the path check is the gate's own: a foreign path is refused without any SQL object") {
    // The same path without the macro: the prefix is compared in C++, not by starts_with.
    auto tip = add_tip([](version_options& v) {
        v.files_json = false;
        v.edit_catalog = [](catalog_model& m) { m.extra_sql = {evil_path_sql}; };
    });
    auto r = pass();
    INFO(describe(r));
    CHECK(held_because(r, tip, catalog_errc::outside_data_dir, "s3://evil.example/xx"));
    CHECK(held_because(r, tip, catalog_errc::outside_data_dir, "lies outside data_dir"));
}

TEST_CASE_FIXTURE(lake_origin, "a view in place of a metadata table, whose rows depend on the reader, is refused") {
    // The gate would see clean rows, every other reader the hostile path.
    auto tip = add_tip([](version_options& v) {
        v.files_json = false;
        v.edit_catalog = [](catalog_model& m) {
            m.extra_sql = {
                "ALTER TABLE ducklake_data_file RENAME TO ducklake_data_file_honest",
                "CREATE VIEW ducklake_data_file AS SELECT * REPLACE (CASE WHEN current_database() LIKE 'fdl_catalog%' "
                "THEN path ELSE '/evil/' || path END AS path) FROM ducklake_data_file_honest"};
        };
    });
    auto r = pass();
    INFO(describe(r));
    CHECK(held_because(r, tip, catalog_errc::foreign_object, "view main.ducklake_data_file"));
    CHECK(!fs::exists(mirror / "versions" / tip / "version.json"));
    auto audit = audit_folder(tmp / "origin");
    INFO(problems_of(audit));
    CHECK(audit_finds(audit, tip, catalog_errc::foreign_object, "view main.ducklake_data_file"));
}

TEST_CASE_FIXTURE(lake_origin, "a corpus of hostile catalogs: each holds its version with the object it names, and "
                               "verify reports it") {
    std::vector<std::string> sql;
    std::string text;
    SUBCASE("a table macro named like the system function that lists tables") {
        sql = {"CREATE MACRO duckdb_tables() AS TABLE SELECT 'ducklake_data_file' AS table_name"};
        text = "table macro main.duckdb_tables";
    }
    SUBCASE("a scalar macro named like an aggregate") {
        sql = {"CREATE MACRO count(x) AS 0"};
        text = "macro main.count";
    }
    for (std::string table : {"ducklake_metadata", "ducklake_snapshot", "ducklake_schema", "ducklake_table",
                              "ducklake_data_file", "ducklake_delete_file", "ducklake_column", "ducklake_view"}) {
        SUBCASE(("a view in place of " + table).c_str()) {
            sql = {view_in_place_of(table)};
            text = "view main." + table;
        }
    }
    SUBCASE("a view that reads another attached database") {
        sql = {"ATTACH ':memory:' AS fdl_catalog_1", "CREATE TABLE fdl_catalog_1.t(x INTEGER)",
               "CREATE VIEW ducklake_peek AS SELECT * FROM fdl_catalog_1.t", "DETACH fdl_catalog_1"};
        text = "view main.ducklake_peek";
    }
    SUBCASE("views that read the reader's settings, databases and files") {
        sql = {"CREATE VIEW ducklake_settings AS SELECT * FROM duckdb_settings()",
               "CREATE VIEW ducklake_databases AS SELECT * FROM duckdb_databases()",
               "CREATE VIEW ducklake_where AS SELECT current_setting('allowed_directories') AS dirs"};
        text = "view main.ducklake_databases";
    }
    SUBCASE("views that name secrets and extensions") {
        sql = {"CREATE VIEW ducklake_secrets AS SELECT * FROM duckdb_secrets()",
               "CREATE VIEW ducklake_which AS SELECT * FROM which_secret('s3://bucket/x', 's3')",
               "CREATE VIEW ducklake_extensions AS SELECT * FROM duckdb_extensions()"};
        text = "view main.ducklake_extensions";
    }
    SUBCASE("a huge view") {
        sql = {"CREATE VIEW ducklake_huge AS SELECT '" + std::string(1 << 20, 'x') + "' AS x"};
        text = "view main.ducklake_huge";
    }
    SUBCASE("a deeply nested view") {
        std::string nested = "SELECT 1 AS x";
        for (int i = 0; i < 300; ++i)
            nested = "SELECT x FROM (" + nested + ")";
        sql = {"CREATE VIEW ducklake_deep AS " + nested};
        text = "view main.ducklake_deep";
    }
    SUBCASE("a generated column whose value depends on the reader") {
        sql = {"ALTER TABLE ducklake_data_file RENAME TO ducklake_data_file_honest",
               "CREATE TABLE ducklake_data_file(data_file_id BIGINT, table_id BIGINT, begin_snapshot BIGINT, "
               "end_snapshot BIGINT, raw_path VARCHAR, path VARCHAR GENERATED ALWAYS AS (CASE WHEN current_database() "
               "LIKE 'fdl_catalog%' THEN raw_path ELSE '/evil/' || raw_path END), path_is_relative BOOLEAN, "
               "file_format VARCHAR, record_count BIGINT, file_size_bytes BIGINT, footer_size BIGINT)",
               "INSERT INTO ducklake_data_file SELECT data_file_id, table_id, begin_snapshot, end_snapshot, path, "
               "path_is_relative, file_format, record_count, file_size_bytes, footer_size FROM ducklake_data_file_honest",
               "DROP TABLE ducklake_data_file_honest"};
        text = "generated column main.ducklake_data_file.path";
    }
    SUBCASE("a user type") {
        sql = {"CREATE TYPE mood AS ENUM ('calm', 'hostile')"};
        text = "type main.mood";
    }
    SUBCASE("a sequence") {
        sql = {"CREATE SEQUENCE ducklake_ids"};
        text = "sequence main.ducklake_ids";
    }
    SUBCASE("an index") {
        sql = {"CREATE INDEX ducklake_by_path ON ducklake_data_file(path)"};
        text = "index main.ducklake_by_path";
    }
    SUBCASE("a schema of its own") {
        sql = {"CREATE SCHEMA elsewhere", "CREATE TABLE elsewhere.ducklake_data_file(x INTEGER)"};
        text = "schema elsewhere";
    }
    SUBCASE("a table outside the format's names") {
        sql = {"CREATE TABLE notes(x INTEGER)"};
        text = "table main.notes";
    }
    auto tip = add_tip([&](version_options& v) { v.edit_catalog = [&](catalog_model& m) { m.extra_sql = sql; }; });
    auto r = pass();
    INFO(describe(r));
    CHECK(r.exit_code() == 1);
    CHECK(r.published == std::vector<std::string>{root});
    CHECK(held_because(r, tip, catalog_errc::foreign_object, text));
    CHECK(!fs::exists(mirror / "versions" / tip / "version.json"));
    CHECK(!fs::exists(mirror / "data/main/towns/ducklake-3.parquet"));
    CHECK(reader_visible_problems(mirror).empty());

    auto audit = audit_folder(tmp / "origin");
    INFO(problems_of(audit));
    CHECK(audit.exit_code() == 1);
    CHECK(audit_finds(audit, tip, catalog_errc::foreign_object, text));
    CHECK(!audit_finds(audit, root, catalog_errc::foreign_object, ""));
}

namespace {

/// The repository the crashing inputs of tests/data/hostile-catalogs were made from, with
/// the catalog of its seq-4 version replaced by `input` (gzip) and pinned by its version.json.
std::filesystem::path hostile_repository(temp_dir const& tmp, std::string const& input, std::string const& victim) {
    std::string const inputs = FDL_MIRROR_HOSTILE_CATALOGS_DIR;
    REQUIRE(std::system(("tar -xzf '" + inputs + "/base-sample-repo.tar.gz' -C '" + tmp.path().string() + "'").c_str()) == 0);
    auto folder = tmp / "repo" / "versions" / victim;
    auto base = read_file(folder / "ducklake.duckdb");
    REQUIRE(std::system(("gunzip -c '" + inputs + "/" + input + "' > '" + (folder / "ducklake.duckdb").string() + "'").c_str()) == 0);
    auto hostile = read_file(folder / "ducklake.duckdb");
    REQUIRE(hostile.size() == base.size());
    auto record = read_file(folder / "version.json");
    auto at = record.find(verify::to_hex(verify::sha256_of(base)));
    REQUIRE(at != std::string::npos);
    record.replace(at, 64, verify::to_hex(verify::sha256_of(hostile)));
    write_file(folder / "version.json", record);
    return tmp / "repo";
}

} // namespace

TEST_CASE("each catalog that crashed DuckDB in-process is now a held version, and its neighbours publish") {
    std::string const victim = "01a24333-9dfb-7cad-a53c-5f70b6a69339";
    // 314 asks DuckDB for a 4 GiB string: the reader's address space limit refuses it
    // before the copy that crashed (a sanitized build sets no such limit, and its
    // allocator stops the reader instead). The others crash the reader, named by signal
    // (or, under a sanitizer that caught the signal, by its exit status).
    struct hostile_input {
        char const* file;
        catalog_errc held_for;
    };
    for (auto const& [input, held_for] : {hostile_input{"crash-segv-144.duckdb.gz", catalog_errc::reader_crashed},
                                          hostile_input{"crash-segv-188.duckdb.gz", catalog_errc::reader_crashed},
                                          hostile_input{"crash-segv-314.duckdb.gz", catalog_errc::reader_limit},
                                          hostile_input{"crash-abort-354.duckdb.gz", catalog_errc::reader_crashed}}) {
        CAPTURE(input);
        temp_dir tmp;
        auto repo = hostile_repository(tmp, input, victim);
        auto r = sync_folders(repo, tmp / "mirror", {});
        INFO(describe(r));
        CHECK(r.exit_code() == 1);
        auto reason = catalog::reader_address_space("256MB") == 0 ? catalog_errc::reader_crashed : held_for;
        // For 314, which comes first, the allocator's refusal at the address space limit or a
        // SIGSEGV of DuckDB on its way there, varies from run to run (one run in six crashed,
        // 2026-12-05): both are the sandbox stopping it.
        auto stopped = [&](auto found) {
            return found(reason) || (reason != held_for && found(held_for)) ||
                   (held_for == catalog_errc::reader_limit && found(catalog_errc::reader_crashed));
        };
        CHECK(stopped([&](catalog_errc why) { return held_because(r, victim, why, ""); }));
        CHECK(r.published.size() == 3);
        CHECK(!fs::exists(tmp / "mirror" / "versions" / victim / "version.json"));
        auto audit = audit_folder(repo);
        CHECK(stopped([&](catalog_errc why) { return audit_finds(audit, victim, why, ""); }));
    }
}
