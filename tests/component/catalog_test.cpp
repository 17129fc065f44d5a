// The frozen catalog as the authority (built with DuckDB only): it names the data files a
// version needs, and a catalog that breaks an FDL rule holds its version in sync and
// fails it in verify, each with its reason.

#include "core/catalog/duckdb_session.hpp"
#include "core/sync/sync_pass.hpp"

#include "tests/component/catalog_helpers.hpp"

#include <doctest/doctest.h>

using namespace mirror;
using namespace mirror::test;
using catalog::catalog_errc;
namespace fs = std::filesystem;

TEST_CASE_FIXTURE(lake_origin, "a version without files.json mirrors completely: the catalog names its data files") {
    // A file in data_dir that no catalog references: a listing would take it, the catalog does not.
    origin.add_data_file("main/orders/ducklake-stray.parquet", "not in any catalog");
    auto tip = add_tip([](version_options& v) { v.files_json = false; });
    auto r = pass();
    INFO(describe(r));
    CHECK(r.exit_code() == 0);
    CHECK(r.published == std::vector<std::string>{root, tip});
    for (auto const* f : {"main/orders/ducklake-1.parquet", "main/orders/ducklake-2.parquet",
                          "main/towns/ducklake-3.parquet"})
        CHECK(read_file(mirror / "data" / f) == read_file(origin.data_path(f)));
    CHECK(!fs::exists(mirror / "data/main/orders/ducklake-stray.parquet"));
    CHECK(!fs::exists(mirror / "versions" / tip / "files.json"));
    CHECK(ref_of(mirror, "refs/heads/main") == tip);

    auto audit = audit_folder(mirror);
    INFO(problems_of(audit));
    CHECK(audit.exit_code() == 0);
    REQUIRE(audit.versions.size() == 2);
    auto const& v = audit.versions.front();
    CHECK(v.id == tip);
    CHECK(v.data_source == "catalog");
    REQUIRE(v.catalog.has_value());
    CHECK(v.catalog->tables == 2);
    CHECK(v.catalog->data_files == 3);
    CHECK(v.data_files_proven == 3);
}

TEST_CASE("real lakes of formats 0.3 and 1.0, with deletes, renames, views and path levels, mirror byte for byte") {
    for (std::string format : {"0.3", "1.0"}) {
        CAPTURE(format);
        temp_dir tmp;
        publisher origin(tmp / "origin");
        version_options v;
        v.catalog = make_real_lake(origin.root() / origin.data_dir(), format);
        auto id = origin.add_version(v);
        origin.set_branch("main", id);
        origin.set_head("main");
        origin.write_refs_json();

        auto r = sync_folders(tmp / "origin", tmp / "mirror");
        INFO(describe(r));
        CHECK(r.exit_code() == 0);
        CHECK(r.published == std::vector<std::string>{id});
        CHECK(reader_visible_problems(tmp / "mirror").empty());
        // Every file the catalog needs at its last snapshot is there, with the same bytes.
        auto const& model = origin.catalog_of(id);
        std::size_t checked = 0;
        auto audit = audit_folder(tmp / "mirror");
        INFO(problems_of(audit));
        CHECK(audit.exit_code() == 0);
        REQUIRE(audit.versions.size() == 1);
        auto const& c = audit.versions[0].catalog;
        REQUIRE(c.has_value());
        CHECK(c->format == format);
        CHECK(c->snapshot == model.snapshots.back());
        CHECK(c->views == std::vector<std::string>{"main.big_orders"});
        CHECK(c->renamed_column_tables == std::vector<std::string>{"sales.customers"});
        CHECK(c->tables_with_deletes == std::vector<std::string>{"main.orders"});
        CHECK(c->delete_files == 1);
        for (auto const& entry : fs::recursive_directory_iterator(tmp / "mirror" / "data"))
            if (entry.is_regular_file()) {
                auto relative = fs::relative(entry.path(), tmp / "mirror" / "data");
                CHECK(read_file(entry.path()) == read_file(origin.data_path(relative.generic_string())));
                ++checked;
            }
        CHECK(checked == audit.versions[0].data_files);
        CHECK(checked == c->data_files + c->delete_files);
    }
}

TEST_CASE_FIXTURE(lake_origin, "hostile catalogs hold their version with the reason, and verify reports each") {
    catalog_errc why{};
    std::string text;
    std::string tip;
    SUBCASE("a file with an absolute path outside data_dir") {
        tip = add_tip([](version_options& v) {
            v.edit_catalog = [](catalog_model& m) {
                m.tables[0].files[0].path = "/elsewhere/foreign.parquet";
                m.tables[0].files[0].relative = false;
            };
        });
        why = catalog_errc::outside_data_dir, text = "'/elsewhere/foreign.parquet' lies outside data_dir";
    }
    SUBCASE("a relative path that climbs out of data_dir") {
        tip = add_tip([](version_options& v) {
            v.edit_catalog = [](catalog_model& m) { m.tables[1].files[0].path = "../../../../etc/passwd"; };
        });
        why = catalog_errc::outside_data_dir, text = "passwd";
    }
    SUBCASE("rows inlined in the catalog") {
        tip = add_tip([](version_options& v) {
            v.edit_catalog = [](catalog_model& m) { m.inlined = {{"ducklake_inlined_data_1_1", 3}}; };
        });
        why = catalog_errc::inlined_rows, text = "ducklake_inlined_data_1_1 holds 3 rows";
    }
    SUBCASE("a catalog whose last snapshot is not version.json's") {
        tip = add_tip([](version_options& v) { v.record_snapshot_id = 99; });
        why = catalog_errc::snapshot_mismatch, text = "says ducklake.snapshot_id 99";
    }
    SUBCASE("a catalog in another format than version.json says") {
        tip = add_tip([](version_options& v) { v.edit_catalog = [](catalog_model& m) { m.format = "0.3"; }; });
        why = catalog_errc::format_mismatch, text = "format 0.3, version.json says 1.0";
    }
    SUBCASE("a catalogs/<format>.duckdb that references other data files") {
        tip = add_tip([](version_options& v) { v.catalog_formats = {"1.1"}; });
        origin.add_late_catalog(tip, "1.1", [](catalog_model& m) { m.tables[1].files.clear(); });
        why = catalog_errc::catalogs_disagree, text = "'main/towns/ducklake-3.parquet' is missing";
    }
    SUBCASE("a catalog of an unknown DuckLake format") {
        tip = add_tip([](version_options& v) {
            v.catalog_format = "7.0";
            v.files_json = false;
        });
        why = catalog_errc::unknown_format, text = "DuckLake format '7.0' is not known";
    }
    SUBCASE("a DuckDB file without the DuckLake tables") {
        tip = add_tip();
        {
            auto db = catalog::duckdb_session::open(tmp / "plain.duckdb", {.read_only = false});
            REQUIRE(db.has_value());
            REQUIRE((*db)->query("CREATE TABLE t(a INTEGER); INSERT INTO t VALUES (1); CHECKPOINT").has_value());
        }
        repin(origin, tip, "catalog", read_file(tmp / "plain.duckdb"));
        why = catalog_errc::query_failed, text = "not a DuckLake catalog";
    }
    SUBCASE("absurd sizes: a negative file size") {
        tip = add_tip([](version_options& v) {
            v.edit_catalog = [](catalog_model& m) {
                m.extra_sql = {"UPDATE ducklake_data_file SET file_size_bytes = -5 WHERE path = 'ducklake-3.parquet'"};
            };
        });
        why = catalog_errc::bad_catalog, text = "row count or size is not a non-negative integer";
    }
    SUBCASE("a write-ahead log beside the catalog") {
        tip = add_tip();
        write_file(origin.version_dir(tip) / "ducklake.duckdb.wal", "a log DuckDB would replay");
        why = catalog_errc::bad_catalog, text = "ducklake.duckdb.wal: a write-ahead log beside the frozen catalog";
    }
    SUBCASE("a catalog that is not a DuckDB file") {
        tip = add_tip();
        repin(origin, tip, "catalog", "SQLite format 3\0 but not really");
        why = catalog_errc::cannot_open, text = "not a DuckDB database";
    }
    auto r = pass();
    INFO(describe(r));
    CHECK(r.exit_code() == 1);
    CHECK(r.published == std::vector<std::string>{root});
    CHECK(held_because(r, tip, why, text));
    CHECK(!fs::exists(mirror / "versions" / tip / "version.json"));
    CHECK(ref_of(mirror, "refs/heads/main") == "");
    // The gate runs before any file of the version is copied.
    CHECK(!fs::exists(mirror / "data/main/towns/ducklake-3.parquet"));
    CHECK(reader_visible_problems(mirror).empty());

    auto audit = audit_folder(tmp / "origin");
    INFO(problems_of(audit));
    CHECK(audit.exit_code() == 1);
    CHECK(audit_finds(audit, tip, why, text));
    CHECK(!audit_finds(audit, root, why, ""));
}

TEST_CASE_FIXTURE(lake_origin, "versions gathered ahead are published in order, and a held one's descendants are "
                               "held as ancestor_held whatever their own catalogs say") {
    std::vector<std::string> chain{root};
    auto add = [&](std::function<void(catalog_model&)> const& edit) {
        version_options v;
        v.parent = chain.back();
        v.data_files = {"main/orders/ducklake-1.parquet", "main/orders/ducklake-2.parquet"};
        v.edit_catalog = edit;
        chain.push_back(origin.add_version(v));
    };
    for (int i = 0; i < 3; ++i)
        add({});
    add([](catalog_model& m) { // chain[4]
        m.extra_sql = {"UPDATE ducklake_data_file SET file_size_bytes = -5 WHERE path = 'ducklake-2.parquet'"};
    });
    add({});
    add([](catalog_model& m) { // chain[6]: hostile too, but gathered while its ancestor was not yet held
        m.tables[0].files[0].path = "/elsewhere/foreign.parquet";
        m.tables[0].files[0].relative = false;
    });
    add({});
    origin.set_branch("main", chain.back());
    origin.set_head("main");
    origin.write_refs_json();

    for (int round = 0; round < 2; ++round) { // the second pass finds the same
        CAPTURE(round);
        auto r = pass();
        INFO(describe(r));
        CHECK(r.exit_code() == 1);
        CHECK(!r.io_failure);
        if (round == 0)
            CHECK(r.published == std::vector<std::string>(chain.begin(), chain.begin() + 4));
        REQUIRE(r.held.size() == 4);
        CHECK(held_because(r, chain[4], catalog_errc::bad_catalog, "not a non-negative integer"));
        for (std::size_t i = 5; i < chain.size(); ++i) {
            CHECK(r.held[i - 4].id == chain[i]);
            CHECK(r.held[i - 4].why.code == sync::sync_errc::ancestor_held);
        }
        CHECK(ref_of(mirror, "refs/heads/main") == "");
        CHECK(!fs::exists(mirror / "versions" / chain[5]));
        CHECK(reader_visible_problems(mirror).empty());
    }
}

TEST_CASE_FIXTURE(lake_origin, "a catalog larger than the mirror reads is refused before it is copied") {
    add_tip();
    sync::sync_options options;
    options.catalogs.max_bytes = 4096;
    auto r = pass(options);
    INFO(describe(r));
    CHECK(held_because(r, root, catalog_errc::too_large, "more than the 4096 this mirror reads"));
    CHECK(r.published.empty());
    CHECK(r.files_copied == 0);
}

TEST_CASE_FIXTURE(lake_origin, "a catalog that references a data file the origin lacks holds its version") {
    auto tip = add_tip([](version_options& v) {
        v.files_json = false;
        v.edit_catalog = [](catalog_model& m) {
            m.tables[1].files.push_back(model_file{"ducklake-absent.parquet", true, 1, 77, {}, m.snapshots.back()});
        };
    });
    auto r = pass();
    INFO(describe(r));
    CHECK(held_for(r, tip, sync::sync_errc::missing_file));
    CHECK(!fs::exists(mirror / "versions" / tip / "version.json"));
}

TEST_CASE_FIXTURE(lake_origin, "reading a catalog past the time limit holds its version as timed out") {
    auto tip = add_tip();
    sync::sync_options options;
    options.catalogs.time_limit = std::chrono::milliseconds(0);
    auto r = pass(options);
    INFO(describe(r));
    CHECK(held_because(r, root, catalog_errc::timed_out, "took too long"));
    CHECK(r.published.empty());
}

TEST_CASE_FIXTURE(lake_origin, "a late catalog in another format is taken only when it references the same files") {
    auto tip = add_tip();
    REQUIRE(pass().exit_code() == 0);
    origin.add_late_catalog(tip, "1.1", [](catalog_model& m) { m.tables[0].files[0].bytes += 1; });
    auto r = pass();
    INFO(describe(r));
    bool found = std::any_of(r.violations.begin(), r.violations.end(), [](auto const& v) {
        return v.code == catalog_errc::catalogs_disagree && v.message.find("has 1001 bytes, not 1000") != std::string::npos;
    });
    CHECK(found);
    CHECK(!fs::exists(mirror / "versions" / tip / "catalogs" / "1.1.duckdb"));

    fs::remove(origin.version_dir(tip) / "catalogs" / "1.1.duckdb");
    origin.add_late_catalog(tip, "1.1");
    r = pass();
    INFO(describe(r));
    CHECK(r.exit_code() == 0);
    CHECK(read_file(mirror / "versions" / tip / "catalogs" / "1.1.duckdb") ==
          read_file(origin.version_dir(tip) / "catalogs" / "1.1.duckdb"));
}

TEST_CASE_FIXTURE(lake_origin, "a version whose files.json disagrees with the catalog is mirrored as the origin has "
                               "it, with the catalog's files, and the disagreement is reported") {
    std::string text;
    SUBCASE("a row count") {
        add_tip([](version_options& v) { v.edit_catalog = [](catalog_model& m) { m.tables[0].files[1].rows = 42; }; });
        text = "rows is 1 in files.json, 42 in the catalog";
    }
    SUBCASE("a data file files.json does not list") {
        origin.add_data_file("main/towns/ducklake-4.parquet", std::string(444, 'd'));
        add_tip([](version_options& v) {
            v.edit_catalog = [](catalog_model& m) {
                m.tables[1].files.push_back(model_file{"ducklake-4.parquet", true, 4, 444, {}, m.snapshots.back()});
            };
        });
        text = "main.towns: 1 files in files.json, 2 in the catalog";
    }
    std::string tip = ref_of(tmp / "origin", "refs/heads/main");
    auto r = pass();
    INFO(describe(r));
    CHECK(r.exit_code() == 1); // published, and a problem to look at
    CHECK(r.held.empty());
    CHECK(r.published == std::vector<std::string>{root, tip});
    REQUIRE(r.published_with_problems.size() == 1);
    CHECK(r.published_with_problems[0].id == tip);
    CHECK(r.published_with_problems[0].why.code == catalog_errc::index_disagrees);
    CHECK_MESSAGE(r.published_with_problems[0].why.message.find(text) != std::string::npos,
                  r.published_with_problems[0].why.message);
    // Byte for byte as the origin published it, and every data file the catalog names.
    for (auto const* file : {"version.json", "files.json", "ducklake.duckdb"})
        CHECK(read_file(mirror / "versions" / tip / file) == read_file(origin.version_dir(tip) / file));
    for (auto const& needed : origin.catalog_of(tip).tables) // the honest model, before the edit
        for (auto const& f : needed.files)
            CHECK(fs::exists(mirror / "data/main" / needed.name / f.path));
    if (text.starts_with("main.towns")) // only the catalog names it
        CHECK(read_file(mirror / "data/main/towns/ducklake-4.parquet") == std::string(444, 'd'));
    CHECK(ref_of(mirror, "refs/heads/main") == tip);
    CHECK(reader_visible_problems(mirror).empty());

    // verify of the mirror reports the same problem, on that version only.
    auto audit = audit_folder(mirror);
    INFO(problems_of(audit));
    CHECK(audit.exit_code() == 1);
    CHECK(audit_finds(audit, tip, catalog_errc::index_disagrees, text));
    CHECK(!audit_finds(audit, root, catalog_errc::index_disagrees, ""));
    // The next pass has nothing left to do.
    auto again = pass();
    CHECK(again.published.empty());
    CHECK(again.published_with_problems.empty());
}

TEST_CASE_FIXTURE(lake_origin, "a scratch folder that cannot be made stops the pass on this host's failure, holding "
                               "no version for it") {
    auto tip = add_tip();
    write_file(tmp / "not-a-folder", "a file where the catalogs' scratch folder would go");
    sync::sync_options options;
    options.catalogs.scratch_parent = tmp / "not-a-folder";
    auto r = pass(options);
    INFO(describe(r));
    CHECK(r.held.empty()); // the versions are not at fault: nothing is held against them
    CHECK(r.published.empty());
    REQUIRE(r.fatal.has_value());
    CHECK(r.fatal->message.find("catalog copies") != std::string::npos);
    CHECK(r.exit_code() == 3);
    CHECK(!fs::exists(mirror / "refs/heads/main"));

    // With a scratch folder that works, the next pass publishes both.
    auto again = pass();
    INFO(describe(again));
    CHECK(again.exit_code() == 0);
    CHECK(again.published == std::vector<std::string>{root, tip});
}
