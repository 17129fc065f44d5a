// fdl-bench-catalog: how long the catalog gate takes to read one frozen catalog (attach,
// the object check, the metadata rows, the checks in C++, detach), alone and in batches as
// the catalog readers take them when several wait. bench/catalog_bench.sh runs it on the
// catalogs of repositories it makes.
//
//   fdl-bench-catalog CATALOG ROUNDS
//
// Prints one line per batch size: "BATCH MS_PER_CATALOG CPU_MS_PER_CATALOG", each the best
// of ROUNDS rounds of 8 catalogs (the sizes take turns within a round); exits 1 when the catalog is not read (a benchmark of a
// refusal would measure something else). Then the same reads through the sandboxed reader
// process, as the gate does them: "sandboxed-BATCH MS CPU_MS" with a warm reader (CPU: this
// process's and the reader's), and "new-reader MS CPU_MS" for a read that starts its reader
// (the first read of each pass). Then DuckDB's own floor, measured the same way
// with its C API and nothing of fdl-mirror: "attach" (ATTACH and DETACH of the catalog),
// "rows" (and the same column selects of the eight metadata tables as the gate, the
// results fetched and dropped) and "listing" (and one duckdb_functions() listing, which
// the object check needs and a batch shares).

#include "core/catalog/catalog_reader.hpp"
#include "core/catalog/catalog_worker.hpp"
#include "core/catalog/detail/duckdb_c.hpp"
#include "core/catalog/sandboxed_reader.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <unistd.h>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace {

double cpu_ms() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/// The CPU time of this process's live children, from /proc (a reader is reaped only when
/// it stops): user and system clock ticks of each.
double children_cpu_ms() {
    double ticks = 0;
    for (auto const& entry : fs::directory_iterator("/proc")) {
        std::string name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        std::FILE* f = std::fopen((entry.path() / "stat").c_str(), "r");
        if (f == nullptr)
            continue;
        char line[1024] = {};
        std::size_t n = std::fread(line, 1, sizeof line - 1, f);
        std::fclose(f);
        std::string stat(line, n);
        auto close = stat.rfind(')');
        if (close == std::string::npos)
            continue;
        // After "(comm)": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
        long ppid = 0;
        unsigned long utime = 0, stime = 0;
        if (std::sscanf(stat.c_str() + close + 2, "%*c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ppid, &utime,
                        &stime) == 3 &&
            ppid == ::getpid())
            ticks += static_cast<double>(utime + stime);
    }
    return ticks * 1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

/// The catalogs read through the sandboxed reader: warm, in batches of 1 and 8, then each
/// read with a reader of its own (two folders taking turns). Prints as described above.
bool print_sandboxed(std::vector<mirror::catalog::catalog_reader::batch_item> const& items, fs::path const& folder,
                     fs::path const& other, int rounds) {
    using namespace mirror::catalog;
    bool ok = true;
    auto check = [&](std::vector<mirror::result<catalog_contents>> const& out) {
        for (auto const& r : out)
            if (!r) {
                std::fprintf(stderr, "fdl-bench-catalog: %s\n", r.error().message.c_str());
                ok = false;
            }
    };
    std::size_t const catalogs = items.size();
    for (std::size_t batch : {std::size_t{1}, catalogs}) {
        sandboxed_reader reader;
        double best_wall = 1e18, best_cpu = 1e18;
        for (int round = 0; round <= rounds && ok; ++round) {
            auto wall = std::chrono::steady_clock::now();
            double cpu = cpu_ms() + children_cpu_ms();
            for (std::size_t at = 0; at < catalogs; at += batch)
                check(reader.read_batch({items.begin() + at, items.begin() + at + batch}, folder));
            double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall).count();
            if (round > 0) { // round 0 starts the reader
                best_wall = std::min(best_wall, ms / catalogs);
                best_cpu = std::min(best_cpu, (cpu_ms() + children_cpu_ms() - cpu) / catalogs);
            }
        }
        std::printf("sandboxed-%zu %.2f %.2f\n", batch, best_wall, best_cpu);
    }
    // A new reader for each read: the two folders take turns, and a reader serves one. As
    // between two passes, the spare has time to start (not counted): what a pass waits for
    // is its reader's first read, DuckDB's database made.
    sandboxed_reader reader;
    double best = 1e18;
    for (int round = 0; round <= rounds && ok; ++round) {
        double ms = 0;
        for (std::size_t i = 0; i < catalogs; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            bool here = i % 2 == 0;
            auto item = items[i];
            if (!here)
                item.file = other / item.file.filename();
            auto wall = std::chrono::steady_clock::now();
            check(reader.read_batch({item}, here ? folder : other));
            ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall).count();
        }
        if (round > 0)
            best = std::min(best, ms / catalogs);
    }
    std::printf("new-reader %.2f -\n", best);
    return ok;
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
        "file_size_bytes, footer_size, file_format, encryption_key FROM c.main.ducklake_data_file",
        "delete_file_id, data_file_id, table_id, begin_snapshot, end_snapshot, path, path_is_relative, "
        "delete_count, file_size_bytes, footer_size, format, encryption_key FROM c.main.ducklake_delete_file",
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
    if (auto served = mirror::catalog::serve_catalog_worker_if_asked(argc, argv))
        return *served; // the sandboxed reader this program starts
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
    fs::path other = folder.string() + "-other";
    fs::create_directories(other);
    for (auto const& item : items)
        fs::copy_file(item.file, other / item.file.filename(), fs::copy_options::overwrite_existing);
    if (!print_sandboxed(items, folder, other, rounds))
        status = 1;
    fs::remove_all(other);
    fs::remove_all(folder);
    return status;
}
