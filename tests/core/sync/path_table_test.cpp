// Lookups by data file path in a table that holds salted digests, not the paths.

#include "core/sync/path_table.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace mirror::sync;

TEST_CASE("a path table finds what was added, keeps the first value, and finds nothing else") {
    path_sizes sizes;
    CHECK(sizes.empty());
    CHECK(sizes.add("main/t/a.parquet", 10));
    CHECK(sizes.add("main/t/b.parquet", 20));
    CHECK_FALSE(sizes.add("main/t/a.parquet", 11)); // the first size found is kept
    CHECK(sizes.size() == 2);
    REQUIRE(sizes.find("main/t/a.parquet") != nullptr);
    CHECK(*sizes.find("main/t/a.parquet") == 10);
    CHECK(*sizes.find("main/t/b.parquet") == 20);
    CHECK(sizes.contains("main/t/b.parquet"));
    // Paths that differ only in what a careless key would drop: case, a trailing byte, a NUL.
    std::vector<std::string> const others{"main/t/A.parquet", "main/t/a.parquet ", "main/t/a.parque", "",
                                          std::string("main/t/a.parquet\0", 17)};
    for (auto const& other : others)
        CHECK_FALSE(sizes.contains(other));
}

TEST_CASE("a path table keeps its entries in place and apart across many paths") {
    path_table<std::string> table;
    std::string const* first = nullptr;
    int added = 0;
    for (int i = 0; i < 50'000; ++i) {
        std::string path = "main/t/ducklake-" + std::to_string(i) + ".parquet";
        added += table.add(path, path) ? 1 : 0;
        if (i == 0)
            first = table.find(path);
    }
    CHECK(added == 50'000);
    CHECK(table.size() == 50'000);
    CHECK(table.find("main/t/ducklake-0.parquet") == first); // rehashing moved nothing
    for (int i = 0; i < 50'000; i += 997) {
        std::string path = "main/t/ducklake-" + std::to_string(i) + ".parquet";
        auto const* value = table.find(path);
        REQUIRE(value != nullptr);
        CHECK(*value == path); // each path has its own entry
    }
    CHECK(table.find("main/t/ducklake-50000.parquet") == nullptr);
}

TEST_CASE("path keys are salted: not the plain SHA-256 of the path, the same within a process") {
    auto plain = mirror::verify::sha256_of("main/t/a.parquet");
    auto key = path_key::of("main/t/a.parquet");
    CHECK(key.digest != plain);
    CHECK(path_key::of("main/t/a.parquet") == key);
    CHECK_FALSE(path_key::of("main/t/b.parquet") == key);
}
