// fdl-bench-catalog: how long the catalog gate takes to read one frozen catalog (attach,
// the object check, the metadata rows, the checks in C++, detach), alone and in batches as
// the catalog readers take them when several wait. bench/catalog_bench.sh runs it on the
// catalogs of repositories it makes.
//
//   fdl-bench-catalog CATALOG ROUNDS
//
// Prints one line per batch size: "BATCH MS_PER_CATALOG CPU_MS_PER_CATALOG", each the best
// of ROUNDS rounds of 8 catalogs (the sizes take turns within a round); exits 1 when the catalog is not read (a benchmark of a
// refusal would measure something else). Then DuckDB's own floor, measured the same way
// with its C API and nothing of fdl-mirror: "attach" (ATTACH and DETACH of the catalog),
// "rows" (and the same column selects of the eight metadata tables as the gate, the
// results fetched and dropped) and "listing" (and one duckdb_functions() listing, which
// the object check needs and a batch shares).

#include "core/catalog/catalog_reader.hpp"
#include "core/catalog/detail/duckdb_c.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <unistd.h>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

double cpu_ms() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/// Runs `sql`, fetches every chunk of its result and drops it; false when it fails.
bool run_and_drop(duckdb_connection connection, std::string const& sql) {
    duckdb_result result{};
    bool ok = duckdb_query(connection, sql.c_str(), &result) == DuckDBSuccess;
    while (duckdb_data_chunk chunk = ok ? duckdb_fetch_chunk(result) : nullptr)
        duckdb_destroy_data_chunk(&chunk);
    if (!ok)
        std::fprintf(stderr, "fdl-bench-catalog: %s\n", duckdb_result_error(&result));
    duckdb_destroy_result(&result);
    return ok;
}

/// What reading `catalog` costs DuckDB alone, at three depths; prints "NAME MS CPU_MS" per
/// depth, each the best of `rounds` rounds of `reads` reads.
bool print_duckdb_floor(fs::path const& catalog, int rounds, int reads) {
    // The columns the gate selects (core/catalog/catalog_rows.cpp).
    static char const* const selects[] = {
        "key, value, scope FROM c.main.ducklake_metadata",
        "snapshot_id FROM c.main.ducklake_snapshot",
        "schema_id, begin_snapshot, end_snapshot, schema_name, path, path_is_relative FROM c.main.ducklake_schema",
        "table_id, begin_snapshot, end_snapshot, schema_id, table_name, path, path_is_relative FROM "
        "c.main.ducklake_table",
        "data_file_id, table_id, begin_snapshot, end_snapshot, path, path_is_relative, record_count, "
        "file_size_bytes, footer_size FROM c.main.ducklake_data_file",
        "delete_file_id, data_file_id, table_id, begin_snapshot, end_snapshot, path, path_is_relative, "
        "delete_count, file_size_bytes, footer_size FROM c.main.ducklake_delete_file",
        "table_id, column_id, column_name FROM c.main.ducklake_column",
        "schema_id, begin_snapshot, end_snapshot, view_name, dialect, sql FROM c.main.ducklake_view"};
    duckdb_database database = nullptr;
    duckdb_connection connection = nullptr;
    duckdb_config config = nullptr;
    char* failure = nullptr;
    bool opened = duckdb_create_config(&config) == DuckDBSuccess &&
                  duckdb_set_config(config, "threads", "1") == DuckDBSuccess && // as the gate's
                  duckdb_open_ext(nullptr, &database, config, &failure) == DuckDBSuccess;
    duckdb_destroy_config(&config);
    duckdb_free(failure);
    if (!opened || duckdb_connect(database, &connection) != DuckDBSuccess)
        return false;
    bool ok = true;
    std::string const attach = "ATTACH '" + catalog.string() + "' AS c (READ_ONLY, TYPE duckdb)";
    for (int depth = 0; depth < 3 && ok; ++depth) {
        double best_wall = 1e18, best_cpu = 1e18;
        for (int round = 0; round <= rounds && ok; ++round) {
            auto wall = std::chrono::steady_clock::now();
            double cpu = cpu_ms();
            for (int read = 0; read < reads && ok; ++read) {
                ok = run_and_drop(connection, attach);
                for (auto const* select : selects)
                    ok = ok && (depth == 0 || run_and_drop(connection, std::string("SELECT ") + select));
                ok = ok && (depth < 2 || run_and_drop(connection, "SELECT database_name, schema_name, function_name, "
                                                                  "function_type FROM duckdb_functions() WHERE "
                                                                  "database_name = 'c' AND NOT internal"));
                ok = ok && run_and_drop(connection, "DETACH c");
            }
            double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall).count();
            if (round > 0) {
                best_wall = std::min(best_wall, ms / reads);
                best_cpu = std::min(best_cpu, (cpu_ms() - cpu) / reads);
            }
        }
        static char const* const names[] = {"attach", "rows", "listing"};
        if (ok)
            std::printf("%s %.2f %.2f\n", names[depth], best_wall, best_cpu);
    }
    duckdb_disconnect(&connection);
    duckdb_close(&database);
    return ok;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: fdl-bench-catalog CATALOG ROUNDS\n");
        return 2;
    }
    using namespace mirror::catalog;
    int rounds = std::max(1, std::atoi(argv[2]));
    constexpr std::size_t catalogs = 8;
    // Private copies, as the gate reads them, in a folder of their own.
    fs::path folder = fs::temp_directory_path() / ("fdl-bench-catalog-" + std::to_string(::getpid()));
    fs::create_directories(folder);
    std::vector<catalog_reader::batch_item> items;
    for (std::size_t i = 0; i < catalogs; ++i) {
        fs::path copy = folder / ("c" + std::to_string(i) + ".duckdb");
        fs::copy_file(argv[1], copy, fs::copy_options::overwrite_existing);
        items.push_back({copy, "c" + std::to_string(i), {}});
    }
    int status = 0;
    {
        catalog_reader reader(folder);
        std::vector<std::size_t> const sizes = {1, 2, 4, 8};
        std::vector<double> best_wall(sizes.size(), 1e18), best_cpu(sizes.size(), 1e18);
        // Batch sizes take turns within each round, so that the machine's ups and downs
        // fall on all of them alike. Round 0 warms the database up.
        for (int round = 0; round <= rounds; ++round)
            for (std::size_t s = 0; s < sizes.size(); ++s) {
                std::size_t batch = sizes[s];
                auto wall = std::chrono::steady_clock::now();
                double cpu = cpu_ms();
                for (std::size_t at = 0; at < catalogs; at += batch) {
                    std::vector<catalog_reader::batch_item> some(items.begin() + at, items.begin() + at + batch);
                    for (auto const& r : batch == 1 ? std::vector{reader.read(some[0].file, some[0].name)}
                                                    : reader.read_batch(some))
                        if (!r) {
                            std::fprintf(stderr, "fdl-bench-catalog: %s\n", r.error().message.c_str());
                            status = 1;
                        }
                }
                double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall).count();
                if (round > 0) {
                    best_wall[s] = std::min(best_wall[s], ms / catalogs);
                    best_cpu[s] = std::min(best_cpu[s], (cpu_ms() - cpu) / catalogs);
                }
            }
        for (std::size_t s = 0; s < sizes.size(); ++s)
            std::printf("%zu %.2f %.2f\n", sizes[s], best_wall[s], best_cpu[s]);
    }
    if (!print_duckdb_floor(items[0].file, rounds, static_cast<int>(catalogs)))
        status = 1;
    fs::remove_all(folder);
    return status;
}
