// fdl-fuzz-catalog: fuzzes the catalog gate with real catalogs that get past DuckDB's own
// corruption check. Each round flips bytes of a real DuckLake catalog, recomputes DuckDB's
// block checksums (tests/fuzz/support/duckdb_checksums.hpp), and reads the result through
// the sandboxed reader, as the gate does. DuckDB is not instrumented and its crashes are
// expected: what must hold is that this process never crashes, that every read comes back
// within its time limit with contents or a catalog error, and that a crash or a limit of
// the reader is reported as one. Not a libFuzzer target: coverage of this process says
// nothing of DuckDB's, which runs in the reader. scripts/fuzz runs it after the libFuzzer
// targets; docs/fuzzing.md says how to run it longer.
//
//   fdl-fuzz-catalog SECONDS [--seed N] [--flips K] [--keep DIR] [BASE_CATALOG...]
//
// Without a base, it writes two catalogs of its own (tests/support/ducklake_writer.hpp).
// Inputs whose reader crashed or went past a limit are kept in DIR (crash-SEED.duckdb)
// when --keep is given. Prints one line of counts; exits 1 when a property broke.

#include "core/catalog/catalog_worker.hpp"
#include "core/catalog/errors.hpp"
#include "core/catalog/sandboxed_reader.hpp"
#include "tests/fuzz/support/duckdb_checksums.hpp"
#include "tests/support/ducklake_writer.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace mirror;

namespace {

std::vector<std::uint8_t> read_bytes(fs::path const& file) {
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(fs::path const& file, std::vector<std::uint8_t> const& bytes) {
    std::ofstream(file, std::ios::binary).write(reinterpret_cast<char const*>(bytes.data()),
                                                static_cast<std::streamsize>(bytes.size()));
}

/// Two catalogs of the shapes the gate reads: tables with files, deletes, a renamed
/// column, a view, two schemas; and one with many files.
std::vector<fs::path> own_bases(fs::path const& folder) {
    test::catalog_model lake;
    lake.data_path = "s3://origin.example/data/";
    lake.snapshots = {0, 1, 2, 3};
    test::model_table orders{.name = "orders"};
    orders.columns = {{1, "id"}, {.id = 2, .name = "amount", .end = 3}, {.id = 2, .name = "total", .begin = 3}};
    for (int i = 1; i <= 6; ++i)
        orders.files.push_back({"ducklake-" + std::to_string(i) + ".parquet", true, 10, 1000u + i, 100, 1});
    orders.files[0].deletes = test::model_delete{"ducklake-1-delete.parquet", true, 2, 300, 2};
    lake.tables.push_back(orders);
    lake.views.push_back({"main", "recent", "SELECT * FROM orders"});
    test::catalog_model many = lake;
    many.tables[0].files.clear();
    for (int i = 1; i <= 2000; ++i)
        many.tables[0].files.push_back({"f-" + std::to_string(i) + ".parquet", true, 1, 100u + i, 10, 1});
    std::vector<fs::path> out = {folder / "base-lake.duckdb", folder / "base-many.duckdb"};
    test::write_catalog(out[0], lake);
    test::write_catalog(out[1], many);
    return out;
}

} // namespace

int main(int argc, char** argv) {
    if (auto served = catalog::serve_catalog_worker_if_asked(argc, argv))
        return *served; // the sandboxed reader this program starts
    if (argc < 2 || std::atoi(argv[1]) <= 0) {
        std::fprintf(stderr, "usage: fdl-fuzz-catalog SECONDS [--seed N] [--flips K] [--keep DIR] [BASE_CATALOG...]\n");
        return 2;
    }
    auto const seconds = std::chrono::seconds(std::atoi(argv[1]));
    std::uint64_t seed = 1;
    std::size_t flips = 32;
    std::optional<fs::path> keep;
    std::vector<fs::path> bases;
    for (int i = 2; i < argc; ++i) {
        std::string arg = argv[i];
        if ((arg == "--seed" || arg == "--flips" || arg == "--keep") && i + 1 < argc) {
            std::string value = argv[++i];
            if (arg == "--seed")
                seed = std::strtoull(value.c_str(), nullptr, 10);
            else if (arg == "--flips")
                flips = std::strtoull(value.c_str(), nullptr, 10);
            else
                keep = value;
        } else {
            bases.emplace_back(arg);
        }
    }
    fs::path folder = fs::temp_directory_path() / ("fdl-fuzz-catalog-" + std::to_string(::getpid()));
    fs::create_directories(folder);
    if (bases.empty())
        bases = own_bases(folder);
    std::vector<std::vector<std::uint8_t>> originals;
    for (auto const& base : bases)
        originals.push_back(read_bytes(base));

    catalog::sandboxed_reader reader;
    catalog::read_options options;
    options.time_limit = std::chrono::seconds(10);
    auto const longest = options.time_limit + catalog::reader_process_settings{}.grace + std::chrono::seconds(20);
    std::map<std::string, std::size_t> outcomes;
    int broken = 0;
    std::size_t rounds = 0;
    auto const until = std::chrono::steady_clock::now() + seconds;
    for (; std::chrono::steady_clock::now() < until; ++seed, ++rounds) {
        auto bytes = originals[seed % originals.size()];
        try {
            test::mutate_duckdb_file(bytes, seed, flips);
        } catch (std::exception const& e) {
            std::fprintf(stderr, "fdl-fuzz-catalog: %s\n", e.what());
            return 2;
        }
        fs::path file = folder / "ducklake.duckdb";
        write_bytes(file, bytes);
        auto started = std::chrono::steady_clock::now();
        auto out = reader.read_batch({{file, "seed-" + std::to_string(seed), options}}, folder);
        auto took = std::chrono::steady_clock::now() - started;
        std::string kind = out[0] ? "read" : catalog::kind_name(static_cast<catalog::catalog_errc>(out[0].error().code.value()));
        if (!out[0] && out[0].error().code.category() != catalog::catalog_category()) {
            std::fprintf(stderr, "seed %llu: an error of another kind: %s\n", static_cast<unsigned long long>(seed),
                         out[0].error().message.c_str());
            ++broken;
        }
        if (!out[0] && out[0].error().message.find("answered garbage") != std::string::npos) {
            // Our own reader answers in its protocol even about a hostile catalog.
            std::fprintf(stderr, "seed %llu: %s\n", static_cast<unsigned long long>(seed), out[0].error().message.c_str());
            ++broken;
        }
        if (took > longest) {
            std::fprintf(stderr, "seed %llu: the read took %lld ms, past the limit\n",
                         static_cast<unsigned long long>(seed),
                         static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()));
            ++broken;
        }
        if (keep && (kind == "reader_crashed" || kind == "reader_limit")) {
            fs::create_directories(*keep);
            fs::copy_file(file, *keep / ("crash-" + std::to_string(seed) + ".duckdb"), fs::copy_options::overwrite_existing);
            std::fprintf(stderr, "seed %llu: %s\n", static_cast<unsigned long long>(seed), out[0].error().message.c_str());
        }
        ++outcomes[kind];
    }
    fs::remove_all(folder);
    std::printf("fdl-fuzz-catalog: %zu mutated catalogs (%zu flips each, seeds to %llu):", rounds, flips,
                static_cast<unsigned long long>(seed - 1));
    for (auto const& [kind, count] : outcomes)
        std::printf(" %s %zu", kind.c_str(), count);
    std::printf("; %d properties broken\n", broken);
    return broken == 0 ? 0 : 1;
}
