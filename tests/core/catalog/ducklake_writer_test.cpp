#include "tests/support/ducklake_writer.hpp"
#include <doctest/doctest.h>

#include "core/catalog/duckdb_session.hpp"
#include "tests/support/temp_dir.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <set>
#include <stdexcept>
#include <string>
#include <utility>

using namespace mirror::test;
using mirror::catalog::duckdb_session;
using mirror::catalog::table;
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

// The spec's query `name` at `snapshot` (spec_present fails the test when it cannot be read).
std::string spec_at(std::string const& name, std::uint64_t snapshot = 0) {
    return mirror::test::spec_query(name, std::to_string(snapshot));
}

bool spec_present() {
    if (!spec_at("10_live_files.sql").empty())
        return true;
    FAIL("the spec's queries (tests/data/ducklake-sql) cannot be read");
    return false;
}

// Runs `sql` on a session; read-only sessions cannot read Parquet (no external access).
table run(fs::path const& file, std::string const& sql, bool read_only = true) {
    auto session = duckdb_session::open(file, {.read_only = read_only});
    REQUIRE_MESSAGE(session.has_value(), (session ? "" : session.error().message));
    auto rows = (*session)->query(sql);
    REQUIRE_MESSAGE(rows.has_value(), (rows ? "" : rows.error().message));
    return std::move(*rows);
}

std::string cell(table const& t, std::size_t row, std::string_view column) {
    REQUIRE(row < t.rows.size());
    return t.rows[row][t.column(column)].value_or("NULL");
}

// Each row's named columns, joined by spaces.
std::vector<std::string> lines(table const& t, std::vector<std::string_view> const& columns) {
    std::vector<std::string> out;
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
        std::string line;
        for (auto c : columns)
            line += (line.empty() ? "" : " ") + cell(t, r, c);
        out.push_back(line);
    }
    return out;
}

// Two tables in two schemas over snapshots 0-2: at 2 orders gets a delete file on its first
// file and its second file replaced, and customers' column 2 is renamed name -> full_name.
// File ids: a 0, its delete 1, b 2, c 3, d 4, e 5.
catalog_model sample(std::string const& format) {
    catalog_model model;
    model.format = format;
    model.snapshots = {0, 1, 2};
    model.schemas = {model_schema{}, model_schema{.name = "sales", .path = "s1/"}};
    model_table orders{.name = "orders", .columns = {{1, "id"}, {2, "amount", "DOUBLE"}}};
    orders.files = {
        {.path = "a.parquet",
         .rows = 5,
         .bytes = 361,
         .footer_bytes = 100,
         .deletes = model_delete{.path = "a-delete.parquet", .rows = 2, .bytes = 852, .begin = 2}},
        {.path = "b.parquet", .rows = 3, .bytes = 320, .end = 2},
        {.path = "c.parquet", .rows = 3, .bytes = 330, .begin = 2},
    };
    model_table customers{.schema = "sales", .name = "customers", .path = "cust/"};
    customers.columns = {{1, "id"}, {2, "name", "VARCHAR", 1, 2}, {2, "full_name", "VARCHAR", 2}};
    customers.files = {
        {.path = "d.parquet", .rows = 7, .bytes = 400},
        // stored absolute, inside data_path
        {.path = "s3://origin.example/repo/data/s1/cust/e.parquet",
         .relative = false,
         .rows = 1,
         .bytes = 90,
         .begin = 2},
    };
    model.tables = {orders, customers};
    model.views = {model_view{.name = "big_orders", .sql = "SELECT * FROM orders WHERE amount > 10"}};
    model.inlined = {{"ducklake_inlined_data_1_1", 0}, {"ducklake_inlined_data_2_1", 3}};
    return model;
}

fs::path written(temp_dir const& tmp, catalog_model const& model) {
    fs::path file = tmp / "ducklake.duckdb";
    write_catalog(file, model);
    REQUIRE(fs::exists(file));
    CHECK_FALSE(fs::exists(tmp / "ducklake.duckdb.wal"));
    return file;
}

// (path, bytes) of every data and delete file files.json lists.
std::set<std::pair<std::string, std::string>> files_of(json::value const& index) {
    std::set<std::pair<std::string, std::string>> out;
    for (auto const& [name, t] : index.at("tables").as_object())
        for (auto const& f : t.at("files").as_array()) {
            out.emplace(f.at("path").as_string().c_str(), std::to_string(f.at("bytes").to_number<std::uint64_t>()));
            if (auto const* d = f.as_object().if_contains("deletes"))
                out.emplace(d->at("path").as_string().c_str(),
                            std::to_string(d->at("bytes").to_number<std::uint64_t>()));
        }
    return out;
}

// (rel_path, file_size_bytes) of what the spec's live-file query finds at `snapshot`.
std::set<std::pair<std::string, std::string>> live_files_of(fs::path const& catalog, std::uint64_t snapshot) {
    auto live = run(catalog, spec_at("10_live_files.sql", snapshot));
    std::set<std::pair<std::string, std::string>> out;
    for (std::size_t r = 0; r < live.rows.size(); ++r)
        out.emplace(cell(live, r, "rel_path"), cell(live, r, "file_size_bytes"));
    return out;
}

} // namespace

TEST_CASE("ducklake_writer: the 0.3 and 1.0 tables, opened read-only") {
    struct expectation {
        std::string format;
        std::string tables;
        std::string data_file_extra, delete_file_columns, column_columns;
    };
    for (auto const& e :
         {expectation{"0.3", "22", "partial_file_info", "12", "11"},
          expectation{"1.0", "28", "partial_max", "13", "13"}, expectation{"9.9", "28", "partial_max", "13", "13"}}) {
        CAPTURE(e.format);
        temp_dir tmp;
        auto catalog = written(tmp, sample(e.format));
        auto tables =
            run(catalog, "SELECT count(*) AS n FROM information_schema.tables WHERE table_name LIKE "
                         "'ducklake_%' AND NOT regexp_matches(table_name, '^ducklake_inlined_data_[0-9_]+$')");
        CHECK(cell(tables, 0, "n") == e.tables);
        auto columns = run(catalog, "SELECT table_name, count(*) AS n, bool_or(column_name = '" + e.data_file_extra +
                                        "') AS has_extra FROM information_schema.columns WHERE table_name IN "
                                        "('ducklake_data_file', 'ducklake_delete_file', 'ducklake_column') "
                                        "GROUP BY table_name ORDER BY table_name");
        CHECK(lines(columns, {"table_name", "n", "has_extra"}) ==
              std::vector<std::string>{"ducklake_column " + e.column_columns + " false", "ducklake_data_file 16 true",
                                       "ducklake_delete_file " + e.delete_file_columns +
                                           (e.format == "0.3" ? " false" : " true")});

        auto metadata = run(catalog, "SELECT key, value FROM ducklake_metadata WHERE scope IS NULL ORDER BY key");
        REQUIRE(metadata.rows.size() == 4);
        CHECK(cell(metadata, 0, "value").starts_with("DuckDB "));
        CHECK(lines(metadata, {"key", "value"})[1] == "data_path s3://origin.example/repo/data/");
        CHECK(lines(metadata, {"key", "value"})[2] == "encrypted false");
        CHECK(lines(metadata, {"key", "value"})[3] == "version " + e.format);

        // main is 0, tables 1-2, the view 3, sales 4; files 0-5 (e begins at 2, id 5).
        auto snapshots = run(catalog, "SELECT snapshot_id, schema_version, next_catalog_id, next_file_id "
                                      "FROM ducklake_snapshot ORDER BY snapshot_id");
        CHECK(lines(snapshots, {"snapshot_id", "schema_version", "next_catalog_id", "next_file_id"}) ==
              std::vector<std::string>{"0 0 1 0", "1 1 5 5", "2 2 5 6"});
        // Not SELECT *: duckdb_session reads only plain column types (no UUID, no timestamp).
        auto schemas = run(catalog, "SELECT schema_id, begin_snapshot, end_snapshot, schema_name, path, "
                                    "path_is_relative FROM ducklake_schema ORDER BY schema_id");
        CHECK(lines(schemas,
                    {"schema_id", "begin_snapshot", "end_snapshot", "schema_name", "path", "path_is_relative"}) ==
              std::vector<std::string>{"0 0 NULL main main/ true", "4 1 NULL sales s1/ true"});
        auto changes = run(catalog, "SELECT changes_made FROM ducklake_snapshot_changes ORDER BY snapshot_id");
        CHECK(cell(changes, 0, "changes_made") == "created_schema:\"main\"");
        auto stats = run(catalog, "SELECT * FROM ducklake_table_stats ORDER BY table_id");
        CHECK(lines(stats, {"table_id", "record_count", "next_row_id", "file_size_bytes"}) ==
              std::vector<std::string>{"1 6 11 691", "2 8 8 490"});
    }
}

TEST_CASE("ducklake_writer: the spec's live-file query finds the model's files, paths and sizes") {
    if (!spec_present())
        return;
    for (std::string format : {"0.3", "1.0"}) {
        CAPTURE(format);
        temp_dir tmp;
        auto catalog = written(tmp, sample(format));
        std::vector<std::string_view> const columns = {"kind",        "file_id",         "data_file_id",
                                                       "schema_name", "table_name",      "format",
                                                       "row_count",   "file_size_bytes", "rel_path"};
        CHECK(lines(run(catalog, spec_at("10_live_files.sql", 1)), columns) ==
              std::vector<std::string>{"data 0 0 main orders parquet 5 361 main/orders/a.parquet",
                                       "data 2 2 main orders parquet 3 320 main/orders/b.parquet",
                                       "data 4 4 sales customers parquet 7 400 s1/cust/d.parquet"});
        CHECK(lines(run(catalog, spec_at("10_live_files.sql", 2)), columns) ==
              std::vector<std::string>{"data 0 0 main orders parquet 5 361 main/orders/a.parquet",
                                       "data 3 3 main orders parquet 3 330 main/orders/c.parquet",
                                       "data 4 4 sales customers parquet 7 400 s1/cust/d.parquet",
                                       "data 5 5 sales customers parquet 1 90 s1/cust/e.parquet",
                                       "delete 1 0 main orders parquet 2 852 main/orders/a-delete.parquet"});
        CHECK(run(catalog, spec_at("10_live_files.sql", 0)).rows.empty());
    }
}

TEST_CASE("ducklake_writer: the spec finds the rename, the view and the inlined tables") {
    if (!spec_present())
        return;
    for (std::string format : {"0.3", "1.0"}) {
        CAPTURE(format);
        temp_dir tmp;
        auto catalog = written(tmp, sample(format));
        CHECK(lines(run(catalog, spec_at("20_renamed_columns.sql")),
                    {"table_id", "table_name", "column_id", "parent_column", "old_name", "new_name",
                     "renamed_at_snapshot"}) == std::vector<std::string>{"2 customers 2 NULL name full_name 2"});
        CHECK(cell(run(catalog, spec_at("21_any_rename.sql")), 0, "any_column_renamed") == "true");
        CHECK(lines(run(catalog, spec_at("30_views.sql", 2)),
                    {"view_id", "schema_name", "view_name", "dialect", "sql"}) ==
              std::vector<std::string>{"3 main big_orders duckdb SELECT * FROM orders WHERE amount > 10"});
        CHECK(run(catalog, spec_at("30_views.sql", 0)).rows.empty());
        CHECK(lines(run(catalog, spec_at("40_inlined_tables.sql")),
                    {"kind", "table_id", "table_name", "schema_version", "exists"}) ==
              std::vector<std::string>{"inlined_data 1 ducklake_inlined_data_1_1 1 true",
                                       "inlined_data 2 ducklake_inlined_data_2_1 1 true"});
        CHECK(cell(run(catalog, "SELECT count(*) AS n FROM ducklake_inlined_data_1_1"), 0, "n") == "0");
        auto filled = run(catalog, "SELECT count(*) AS n, max(full_name) AS top FROM ducklake_inlined_data_2_1");
        CHECK(cell(filled, 0, "n") == "3");
        CHECK(cell(filled, 0, "top") == "2");
    }
}

TEST_CASE("ducklake_writer: files_json_of agrees with the model at a snapshot") {
    auto model = sample("1.0");
    auto at1 = json::parse(files_json_of(model, 1));
    auto at2 = json::parse(files_json_of(model, 2));
    REQUIRE(at2.at("tables").as_object().size() == 2);
    auto const& orders = at2.at("tables").at("main.orders");
    auto const& customers = at2.at("tables").at("sales.customers");
    CHECK(orders.as_object().if_contains("renamed_columns") == nullptr);
    CHECK(customers.at("renamed_columns").as_bool());
    REQUIRE(orders.at("files").as_array().size() == 2);
    auto const& a = orders.at("files").at(0);
    CHECK(a.at("path").as_string() == "main/orders/a.parquet");
    CHECK(a.at("rows").to_number<int>() == 5);
    CHECK(a.at("bytes").to_number<int>() == 361);
    CHECK(a.at("footer_bytes").to_number<int>() == 100);
    CHECK(a.at("deletes").at("path").as_string() == "main/orders/a-delete.parquet");
    CHECK(a.at("deletes").at("rows").to_number<int>() == 2);
    CHECK(a.at("deletes").at("bytes").to_number<int>() == 852);
    CHECK(orders.at("files").at(1).at("path").as_string() == "main/orders/c.parquet");
    CHECK(orders.at("files").at(1).as_object().if_contains("footer_bytes") == nullptr);
    CHECK(customers.at("files").at(1).at("path").as_string() == "s1/cust/e.parquet");
    // At 1: no delete yet, b instead of c, no e.
    auto const& orders1 = at1.at("tables").at("main.orders").at("files");
    CHECK(orders1.at(0).as_object().if_contains("deletes") == nullptr);
    CHECK(orders1.at(1).at("path").as_string() == "main/orders/b.parquet");
    CHECK(at1.at("tables").at("sales.customers").at("files").as_array().size() == 1);
    // At 0 nothing exists yet, and a dropped table leaves.
    CHECK(json::parse(files_json_of(model, 0)).at("tables").as_object().empty());
    model.tables[1].end = 2;
    CHECK(json::parse(files_json_of(model, 2)).at("tables").as_object().size() == 1);

    if (!spec_present())
        return;
    temp_dir tmp;
    auto catalog = written(tmp, sample("0.3"));
    for (std::uint64_t s : {0, 1, 2}) {
        CAPTURE(s);
        CHECK(files_of(json::parse(files_json_of(sample("0.3"), s))) == live_files_of(catalog, s));
    }
}

TEST_CASE("ducklake_writer: make_real_lake writes Parquet files of the recorded sizes") {
    for (std::string format : {"0.3", "1.0"}) {
        CAPTURE(format);
        temp_dir tmp;
        fs::path const data = tmp / "data";
        auto model = make_real_lake(data, format);
        REQUIRE(model.tables.size() == 2);
        CHECK(model.snapshots == std::vector<std::uint64_t>{0, 1, 2, 3});
        CHECK(model.schemas.at(1).path == "eu_sales/");
        auto const& orders = model.tables[0];
        REQUIRE(orders.files.size() == 3);
        CHECK(orders.files[1].end == std::optional<std::uint64_t>(3));
        REQUIRE(orders.files[0].deletes.has_value());
        CHECK(json::parse(files_json_of(model, 3)).at("tables").at("sales.customers").at("renamed_columns").as_bool());

        auto const dir = [&](model_table const& t) {
            return data / (t.schema == "main" ? "main" : "eu_sales") / t.name;
        };
        for (auto const& t : model.tables)
            for (auto const& f : t.files) {
                CAPTURE(f.path);
                fs::path const file = dir(t) / f.path;
                REQUIRE(fs::exists(file));
                CHECK(fs::file_size(file) == f.bytes);
                auto meta = run(":memory:",
                                "SELECT count(*) AS n, (SELECT footer_size FROM parquet_file_metadata('" +
                                    file.string() + "')) AS footer FROM read_parquet('" + file.string() + "')",
                                false);
                CHECK(cell(meta, 0, "n") == std::to_string(f.rows));
                REQUIRE(f.footer_bytes.has_value());
                CHECK(cell(meta, 0, "footer") == std::to_string(*f.footer_bytes));
                auto ids =
                    run(":memory:", "SELECT field_id FROM parquet_schema('" + file.string() + "') WHERE name = 'id'",
                        false);
                CHECK(cell(ids, 0, "field_id") == "1");
            }
        // The delete file names the data file by its full path; applied, it leaves ids 1, 3, 5.
        fs::path const a = dir(orders) / orders.files[0].path, del = dir(orders) / orders.files[0].deletes->path;
        CHECK(fs::file_size(del) == orders.files[0].deletes->bytes);
        auto del_ids = run(":memory:",
                           "SELECT name, field_id FROM parquet_schema('" + del.string() +
                               "') WHERE field_id IS NOT NULL ORDER BY name",
                           false);
        CHECK(lines(del_ids, {"name", "field_id"}) ==
              std::vector<std::string>{"file_path 2147483546", "pos 2147483545"});
        auto deleted =
            run(":memory:", "SELECT count(*) AS n, min(file_path) AS target FROM read_parquet('" + del.string() + "')",
                false);
        CHECK(cell(deleted, 0, "n") == "2");
        CHECK(cell(deleted, 0, "target") == model.data_path + "main/orders/" + orders.files[0].path);
        auto kept = run(":memory:",
                        "SELECT string_agg(id::VARCHAR, ',' ORDER BY id) AS ids FROM read_parquet('" + a.string() +
                            "', file_row_number = true) WHERE file_row_number NOT IN "
                            "(SELECT pos FROM read_parquet('" +
                            del.string() + "'))",
                        false);
        CHECK(cell(kept, 0, "ids") == "1,3,5");

        if (!spec_present())
            continue;
        auto catalog = written(tmp, model);
        for (std::uint64_t s : {1, 2, 3}) {
            CAPTURE(s);
            auto live = live_files_of(catalog, s);
            CHECK(files_of(json::parse(files_json_of(model, s))) == live);
            for (auto const& [path, bytes] : live)
                CHECK(std::to_string(fs::file_size(data / path)) == bytes);
        }
        CHECK(live_files_of(catalog, 3).size() == 4); // a, its delete, c, d
        CHECK(cell(run(catalog, spec_at("20_renamed_columns.sql")), 0, "new_name") == "full_name");
        CHECK(run(catalog, spec_at("30_views.sql", 3)).rows.size() == 1);
        CHECK(cell(run(catalog, spec_at("40_inlined_tables.sql")), 0, "table_name") == "ducklake_inlined_data_1_1");
    }
}

TEST_CASE("ducklake_writer: failures throw with DuckDB's message") {
    temp_dir tmp;
    auto model = sample("1.0");
    model.extra_sql = {"DELETE FROM no_such_table"};
    try {
        write_catalog(tmp / "a.duckdb", model);
        FAIL("expected an exception");
    } catch (std::runtime_error const& e) {
        CHECK(std::string(e.what()).find("no_such_table") != std::string::npos);
    }
    CHECK_THROWS_AS(write_catalog(tmp / "a.duckdb", sample("1.0")), std::runtime_error); // exists
    auto stray = sample("1.0");
    stray.tables[1].schema = "nowhere";
    CHECK_THROWS_WITH_AS(write_catalog(tmp / "b.duckdb", stray), doctest::Contains("nowhere"), std::runtime_error);
    CHECK_FALSE(fs::exists(tmp / "b.duckdb"));

    // A hostile variant: a file outside data_path has no rel_path.
    if (!spec_present())
        return;
    auto outside = sample("1.0");
    outside.extra_sql = {"UPDATE ducklake_data_file SET path = '/elsewhere/x.parquet', path_is_relative = false "
                         "WHERE data_file_id = 4"};
    auto catalog = tmp / "c.duckdb";
    write_catalog(catalog, outside);
    auto live = run(catalog, spec_at("10_live_files.sql", 1));
    CHECK(lines(live, {"file_id", "rel_path", "full_path"})[2] == "4 NULL /elsewhere/x.parquet");
}
