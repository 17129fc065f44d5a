#include "core/catalog/catalog_reader.hpp"
#include <doctest/doctest.h>

#include "core/catalog/duckdb_session.hpp"
#include "tests/support/publisher.hpp"
#include "tests/support/temp_dir.hpp"

using namespace mirror;
using namespace mirror::catalog;
using namespace mirror::test;
namespace fs = std::filesystem;

namespace {

// The DuckLake 1.0 tables the reader's queries touch, with the columns the spec's DDL
// gives them (spec/ducklake-catalog.md, section 3).
constexpr char const* schema_ddl = R"sql(
CREATE TABLE ducklake_metadata(key VARCHAR NOT NULL, value VARCHAR NOT NULL, scope VARCHAR, scope_id BIGINT);
CREATE TABLE ducklake_snapshot(snapshot_id BIGINT PRIMARY KEY, snapshot_time TIMESTAMPTZ, schema_version BIGINT,
                               next_catalog_id BIGINT, next_file_id BIGINT);
CREATE TABLE ducklake_schema(schema_id BIGINT PRIMARY KEY, schema_uuid UUID, begin_snapshot BIGINT, end_snapshot BIGINT,
                             schema_name VARCHAR, path VARCHAR, path_is_relative BOOLEAN);
CREATE TABLE ducklake_table(table_id BIGINT, table_uuid UUID, begin_snapshot BIGINT, end_snapshot BIGINT,
                            schema_id BIGINT, table_name VARCHAR, path VARCHAR, path_is_relative BOOLEAN);
CREATE TABLE ducklake_data_file(data_file_id BIGINT PRIMARY KEY, table_id BIGINT, begin_snapshot BIGINT,
                                end_snapshot BIGINT, file_order BIGINT, path VARCHAR, path_is_relative BOOLEAN,
                                file_format VARCHAR, record_count BIGINT, file_size_bytes BIGINT, footer_size BIGINT,
                                row_id_start BIGINT, partition_id BIGINT, encryption_key VARCHAR, partial_max BIGINT,
                                mapping_id BIGINT);
CREATE TABLE ducklake_delete_file(delete_file_id BIGINT PRIMARY KEY, table_id BIGINT, begin_snapshot BIGINT,
                                  end_snapshot BIGINT, data_file_id BIGINT, path VARCHAR, path_is_relative BOOLEAN,
                                  format VARCHAR, delete_count BIGINT, file_size_bytes BIGINT, footer_size BIGINT,
                                  encryption_key VARCHAR, partial_max BIGINT);
)sql";

// Two snapshots: orders and customers at 1; at 2 a delete file on orders and customers'
// file replaced (the spec fixture's story).
std::string rows(std::string const& format, std::string const& customers_path, bool customers_relative) {
    return "INSERT INTO ducklake_metadata VALUES ('version', '" + format + "', NULL, NULL),"
           " ('data_path', '/home/producer/repo/data/', NULL, NULL), ('created_by', 'test', NULL, NULL);"
           "INSERT INTO ducklake_snapshot VALUES (0, now(), 0, 1, 0), (1, now(), 1, 3, 2), (2, now(), 2, 3, 4);"
           "INSERT INTO ducklake_schema VALUES (0, uuid(), 0, NULL, 'main', 'main/', true);"
           "INSERT INTO ducklake_table VALUES (1, uuid(), 1, NULL, 0, 'orders', 'orders/', true),"
           " (2, uuid(), 1, NULL, 0, 'customers', 'customers/', true);"
           "INSERT INTO ducklake_data_file VALUES"
           " (0, 1, 1, NULL, NULL, 'ducklake-a1.parquet', true, 'parquet', 5, 361, 100, 0, NULL, NULL, NULL, NULL),"
           " (1, 2, 1, 2, NULL, 'ducklake-b1.parquet', true, 'parquet', 3, 320, 100, 0, NULL, NULL, NULL, NULL),"
           " (3, 2, 2, NULL, NULL, '" + customers_path + "', " + (customers_relative ? "true" : "false") +
           ", 'parquet', 3, 330, 100, 0, NULL, NULL, NULL, NULL);"
           "INSERT INTO ducklake_delete_file VALUES"
           " (2, 1, 2, NULL, 0, 'ducklake-a2-delete.parquet', true, 'parquet', 2, 852, 100, NULL, NULL);";
}

fs::path make_catalog(fs::path const& dir, std::string const& format = "1.0",
                      std::string const& customers_path = "ducklake-b2.parquet", bool customers_relative = true) {
    fs::path file = dir / "ducklake.duckdb";
    auto session = duckdb_session::open(file, {.read_only = false});
    REQUIRE_MESSAGE(session.has_value(), (session ? "" : session.error().message));
    for (auto const* sql : {schema_ddl})
        REQUIRE((*session)->query(sql).has_value());
    auto inserted = (*session)->query(rows(format, customers_path, customers_relative));
    REQUIRE_MESSAGE(inserted.has_value(), (inserted ? "" : inserted.error().message));
    return file;
}

boost::system::error_code code_of(result<catalog_contents> const& r) {
    return r ? boost::system::error_code{} : r.error().code;
}

} // namespace

TEST_CASE("a catalog's live files at its last snapshot, with paths relative to data_dir") {
    temp_dir tmp;
    auto contents = read_catalog(make_catalog(tmp.path()), "versions/x/ducklake.duckdb");
    REQUIRE_MESSAGE(contents.has_value(), (contents ? "" : contents.error().message));
    CHECK(contents->format == "1.0");
    CHECK(contents->last_snapshot == 2);
    CHECK(contents->data_path == "/home/producer/repo/data/");
    REQUIRE(contents->live_files.size() == 3);
    CHECK(contents->live_files[0].path == "main/orders/ducklake-a1.parquet");
    CHECK(contents->live_files[0].bytes == 361);
    CHECK(contents->live_files[0].rows == 5);
    CHECK(contents->live_files[1].path == "main/customers/ducklake-b2.parquet"); // b1 ended at snapshot 2
    CHECK(contents->live_files[2].is_delete);
    CHECK(contents->live_files[2].path == "main/orders/ducklake-a2-delete.parquet");
    CHECK(contents->live_files[2].table == "orders");
}

TEST_CASE("a file outside data_dir, or with an unsafe path, is refused") {
    temp_dir tmp;
    std::string path;
    bool relative = true;
    SUBCASE("absolute, elsewhere") { path = "/elsewhere/foreign.parquet", relative = false; }
    SUBCASE("traversal") { path = "../../../etc/passwd"; }
    SUBCASE("another host") { path = "s3://other/x.parquet", relative = false; }
    auto contents = read_catalog(make_catalog(tmp.path(), "1.0", path, relative), "c.duckdb");
    REQUIRE(!contents);
    CHECK(code_of(contents) == catalog_errc::bad_catalog);
    CHECK(contents.error().message.starts_with("c.duckdb: "));
}

TEST_CASE("an absolute path inside data_path is accepted, relative to data_dir") {
    temp_dir tmp;
    auto contents = read_catalog(
        make_catalog(tmp.path(), "1.0", "/home/producer/repo/data/main/customers/ducklake-b2.parquet", false), "c");
    REQUIRE(contents.has_value());
    CHECK(contents->live_files[1].path == "main/customers/ducklake-b2.parquet");
}

TEST_CASE("files that are not DuckLake catalogs are refused with the reason") {
    temp_dir tmp;
    SUBCASE("not a DuckDB file") {
        write_file(tmp / "x.duckdb", "not a database at all");
        CHECK(code_of(read_catalog(tmp / "x.duckdb", "x")) == catalog_errc::cannot_open);
    }
    SUBCASE("a DuckDB file without the DuckLake tables") {
        {
            auto session = duckdb_session::open(tmp / "y.duckdb", {.read_only = false});
            REQUIRE(session.has_value());
            REQUIRE((*session)->query("CREATE TABLE t(a INTEGER)").has_value());
        }
        auto r = read_catalog(tmp / "y.duckdb", "y");
        CHECK(code_of(r) == catalog_errc::query_failed);
        CHECK(r.error().message.find("not a DuckLake catalog") != std::string::npos);
    }
    SUBCASE("an unknown format") {
        CHECK(code_of(read_catalog(make_catalog(tmp.path(), "9.9"), "z")) == catalog_errc::unknown_format);
    }
    SUBCASE("absent") { CHECK(code_of(read_catalog(tmp / "absent.duckdb", "a")) == catalog_errc::cannot_open); }
}

TEST_CASE("the formats this reader knows") {
    for (char const* f : {"0.3", "0.4", "1.0", "1.1", "1.1-dev1"})
        CHECK(is_known_format(f));
    for (char const* f : {"0.2", "2.0", "", "1.0 "})
        CHECK_FALSE(is_known_format(f));
}
