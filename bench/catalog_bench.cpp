// fdl-bench-catalog: how long the catalog gate takes to read one frozen catalog (attach,
// the object check, the metadata rows, the checks in C++, detach), alone and in batches as
// the catalog readers take them when several wait. bench/catalog_bench.sh runs it on the
// catalogs of repositories it makes.
//
//   fdl-bench-catalog CATALOG ROUNDS
//
// Prints one line per batch size: "BATCH MS_PER_CATALOG CPU_MS_PER_CATALOG", each the best
// of ROUNDS rounds of 8 catalogs (the sizes take turns within a round); exits 1 when the catalog is not read (a benchmark of a
// refusal would measure something else).

#include "core/catalog/catalog_reader.hpp"

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
    fs::remove_all(folder);
    return status;
}
