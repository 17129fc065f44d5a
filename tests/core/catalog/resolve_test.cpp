#include "core/catalog/resolve.hpp"
#include <doctest/doctest.h>

using namespace mirror::catalog;

namespace {
path_level rel(std::string path) { return {std::move(path), true}; }
path_level abs(std::string path) { return {std::move(path), false}; }
} // namespace

TEST_CASE("a row is visible from its begin snapshot up to, not including, its end") {
    CHECK(lifetime{1, std::nullopt}.visible_at(1));
    CHECK(lifetime{1, std::nullopt}.visible_at(900));
    CHECK(!lifetime{1, std::nullopt}.visible_at(0));
    CHECK(lifetime{1, 3}.visible_at(2));
    CHECK(!lifetime{1, 3}.visible_at(3));
    CHECK(!lifetime{std::nullopt, std::nullopt}.visible_at(5)); // as SQL compares with NULL
    // Signs a hostile catalog chooses: a negative begin is before every snapshot, a
    // negative or zero end after none.
    CHECK(lifetime{-7, std::nullopt}.visible_at(0));
    CHECK(!lifetime{0, -1}.visible_at(0));
    CHECK(!lifetime{0, 0}.visible_at(0));
    CHECK(lifetime{0, 1}.visible_at(0));
    CHECK(!lifetime{INT64_MAX, std::nullopt}.visible_at(5));
    CHECK(lifetime{0, INT64_MAX}.visible_at(UINT64_MAX - 1) == false);
}

TEST_CASE("paths resolve as DuckLake joins them, relative to data_dir when every level is") {
    std::optional<std::string> data_path = "s3://origin/repo/data/";
    auto r = resolve_path(data_path, rel("main/"), rel("orders/"), "ducklake-1.parquet", true);
    CHECK(r.relative == "main/orders/ducklake-1.parquet");
    CHECK(r.full == "s3://origin/repo/data/main/orders/ducklake-1.parquet");
    // Absent levels mean "same as the parent".
    r = resolve_path(data_path, {}, {}, "x.parquet", true);
    CHECK(r.relative == "x.parquet");
    // Every level relative: data_path plays no part, even when absent.
    CHECK(resolve_path(std::nullopt, rel("a/"), rel("b/"), "c", true).relative == "a/b/c");
}

TEST_CASE("an absolute level must lie under data_path, cut at a folder boundary") {
    std::optional<std::string> data_path = "s3://origin/repo/data/";
    auto inside = resolve_path(data_path, rel("main/"), rel("t/"), "s3://origin/repo/data/main/t/f.parquet", false);
    CHECK(inside.relative == "main/t/f.parquet");
    auto table_abs = resolve_path(data_path, rel("main/"), abs("s3://origin/repo/data/elsewhere/"), "f", true);
    CHECK(table_abs.relative == "elsewhere/f");
    auto schema_abs = resolve_path(data_path, abs("/tmp/"), rel("t/"), "f", true);
    CHECK(schema_abs.full == "/tmp/t/f");
    CHECK(!schema_abs.relative);
    // The attack that once passed: another host, padded to data_path's length.
    std::string padded = "s3://evil.example/xxxx";
    CHECK(padded.size() == data_path->size());
    auto evil = resolve_path(data_path, rel("main/"), rel("t/"), padded + "main/t/f.parquet", false);
    CHECK(!evil.relative);
    CHECK(evil.full == padded + "main/t/f.parquet");
    // A data_path without its final '/' does not take in a sibling folder.
    std::optional<std::string> bare = "s3://origin/repo/data";
    CHECK(!resolve_path(bare, {}, {}, "s3://origin/repo/database/f", false).relative);
    CHECK(resolve_path(bare, {}, {}, "s3://origin/repo/data/f", false).relative == "f");
    // No data_path, or an empty one, takes in nothing absolute.
    CHECK(!resolve_path(std::nullopt, {}, {}, "/f", false).relative);
    CHECK(!resolve_path(std::string(), {}, {}, "/f", false).relative);
}
