// fdl-test-publisher: writes test repositories from the shell, for system tests, the
// demo (scripts/demo) and the benchmark.
//
//   fdl-test-publisher sample ROOT [--sign KEY [--namespace NS]]
//   fdl-test-publisher add ROOT BRANCH [DATA_BYTES] [--sign KEY [--namespace NS]]
//                                      a new version on BRANCH with one new data file; prints its id
//   fdl-test-publisher bench ROOT VERSIONS SMALL_FILES SMALL_BYTES LARGE_FILES LARGE_BYTES
//   fdl-test-publisher bench-spread ROOT VERSIONS FILES_PER_VERSION BYTES
//                                      each version with files of its own (a repository whose
//                                      file count grows with its versions: bench/scale_bench.sh)
//   fdl-test-publisher lake ROOT [FORMAT]  one version of a real lake (Parquet written by DuckDB,
//                                          deletes, a rename, a view, two schemas; FORMAT 0.3 or 1.0)
//   fdl-test-publisher memory-input ROOT KIND
//                                      one version made to cost a mirror memory (issue 31):
//                                      dead-rows (990,000 dead data-file rows in the catalog),
//                                      live-rows (900,000 live ones), files-json (a 60 MiB
//                                      files.json), dataset-json (a 15 MiB dataset.json),
//                                      many-rows (20,000 live rows, none of them at the origin)
//   fdl-test-publisher check ROOT      exit 1 and list what a reader of ROOT would find broken
//
// --sign KEY signs each new version.json with `ssh-keygen -Y sign -f KEY -n NS` (NS is
// --namespace, default fdl), writing version.json.sig before any ref names the version.

#include "tests/support/publisher.hpp"

#include <cstdio>
#include <filesystem>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace mirror::test;

/// The key and namespace of --sign KEY [--namespace NS].
struct signing {
    std::filesystem::path key;
    std::string ns = "fdl";
};

/// Takes --sign KEY and --namespace NS out of `args`. Throws std::invalid_argument (a usage
/// error) when either lacks its value or --namespace comes without --sign, and
/// std::runtime_error when KEY is not a file.
std::optional<signing> take_signing(std::vector<std::string>& args) {
    std::optional<std::string> key, ns;
    std::vector<std::string> rest;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i] != "--sign" && args[i] != "--namespace") {
            rest.push_back(args[i]);
            continue;
        }
        if (i + 1 == args.size() || args[i + 1].empty())
            throw std::invalid_argument(args[i] + " needs a value");
        (args[i] == "--sign" ? key : ns) = args[i + 1];
        ++i;
    }
    args = std::move(rest);
    if (!key) {
        if (ns)
            throw std::invalid_argument("--namespace needs --sign");
        return std::nullopt;
    }
    if (!std::filesystem::is_regular_file(*key))
        throw std::runtime_error("--sign: " + *key + ": no such key file");
    return signing{*key, ns.value_or("fdl")};
}

std::string tip_of(publisher const& p, std::string const& branch) {
    std::string id = read_file(p.root() / "refs" / "heads" / branch);
    if (id.ends_with('\n'))
        id.pop_back();
    return id;
}

std::string random_bytes(std::size_t size, std::mt19937_64& random) {
    std::string bytes(size, '\0');
    for (std::size_t i = 0; i < size; i += 8) {
        std::uint64_t r = random();
        for (std::size_t j = 0; j < 8 && i + j < size; ++j)
            bytes[i + j] = static_cast<char>(r >> (8 * j));
    }
    return bytes;
}

int add(std::string const& root, std::string const& branch, std::size_t bytes, std::optional<signing> const& sign) {
    auto p = publisher::existing(root);
    if (sign)
        p.sign_new_versions(sign->key, sign->ns);
    std::string parent = tip_of(p, branch);
    std::mt19937_64 random{std::random_device{}()};
    std::string path = "main/t/ducklake-" + std::to_string(random() % 1000000000) + ".parquet";
    p.add_data_file(path, random_bytes(bytes, random));
    version_options v;
    v.parent = parent;
    v.data_files = {path};
    std::string id = p.add_version(v);
    p.set_branch(branch, id);
    p.write_refs_json();
    std::printf("%s\n", id.c_str());
    return 0;
}

int bench(std::string const& root, std::size_t versions, std::size_t small, std::size_t small_bytes, std::size_t large,
          std::size_t large_bytes) {
    publisher p(root);
    std::mt19937_64 random{42};
    std::vector<std::string> files;
    for (std::size_t i = 0; i < small; ++i) {
        files.push_back("main/small/ducklake-" + std::to_string(i) + ".parquet");
        p.add_data_file(files.back(), random_bytes(small_bytes, random));
    }
    for (std::size_t i = 0; i < large; ++i) {
        files.push_back("main/large/ducklake-" + std::to_string(i) + ".parquet");
        p.add_data_file(files.back(), random_bytes(large_bytes, random));
    }
    std::optional<std::string> parent;
    for (std::size_t v = 0; v < versions; ++v) {
        version_options options;
        options.parent = parent;
        // Every version shares all files: the repository's bytes are the data files, once.
        options.data_files = files;
        parent = p.add_version(options);
    }
    p.set_branch("main", *parent);
    p.set_head("main");
    p.write_refs_json();
    return 0;
}

int bench_spread(std::string const& root, std::size_t versions, std::size_t per_version, std::size_t bytes) {
    publisher p(root);
    std::mt19937_64 random{42};
    std::optional<std::string> parent;
    for (std::size_t v = 0; v < versions; ++v) {
        version_options options;
        options.parent = parent;
        for (std::size_t i = 0; i < per_version; ++i) {
            options.data_files.push_back("main/v" + std::to_string(v) + "/ducklake-" + std::to_string(i) + ".parquet");
            p.add_data_file(options.data_files.back(), random_bytes(bytes, random));
        }
        parent = p.add_version(options);
    }
    p.set_branch("main", *parent);
    p.set_head("main");
    p.write_refs_json();
    return 0;
}

/// Writes one version as main's tip and HEAD's branch, with refs.json; prints its id.
[[maybe_unused]] int publish_on_main(publisher& p, version_options const& v) {
    std::string id = p.add_version(v);
    p.set_branch("main", id);
    p.set_head("main");
    p.write_refs_json();
    std::printf("%s\n", id.c_str());
    return 0;
}

int lake(std::string const& root, std::string const& format) {
#ifdef FDL_MIRROR_HAVE_DUCKDB
    publisher p(root);
    version_options v;
    v.catalog = make_real_lake(p.root() / p.data_dir(), format);
    v.message = "a real lake in DuckLake format " + format;
    return publish_on_main(p, v);
#else
    (void)root, (void)format;
    std::fputs("fdl-test-publisher: built without DuckDB, cannot write a real lake\n", stderr);
    return 1;
#endif
}

/// The memory-input KINDs: each version is otherwise well formed, so what it costs is what
/// a mirror must bound (tests/system/memory_bound_test.sh).
int memory_input(std::string const& root, std::string const& kind) {
#ifdef FDL_MIRROR_HAVE_DUCKDB
    publisher p(root);
    p.add_data_file("main/t/ducklake-1.parquet", std::string(1000, 'x'));
    catalog_model model;
    model.snapshots = {0, 1, 2};
    model_table table;
    table.name = "t";
    table.begin = 1;
    table.columns = {{1, "value", "VARCHAR", 1}};
    model_file file;
    file.path = "ducklake-1.parquet";
    file.rows = 1;
    file.bytes = 1000;
    file.begin = 1;
    table.files = {file};
    model.tables = {table};
    version_options v;
    v.catalog = model;
    // Rows added with SQL, a million of them in a second; ids past the model's own.
    auto file_rows = [](std::uint64_t count, char const* end_snapshot) {
        return "INSERT INTO ducklake_data_file (data_file_id, table_id, begin_snapshot, end_snapshot, path, "
               "path_is_relative, file_format, record_count, file_size_bytes, row_id_start) "
               "SELECT 1000 + i, 1, 1, " + std::string(end_snapshot) +
               ", 'ducklake-' || i || '-' || md5(i::VARCHAR)[:8] || '.parquet', true, 'parquet', 10, 1000, 0 "
               "FROM range(" + std::to_string(count) + ") t(i)";
    };
    if (kind == "dead-rows") {
        v.catalog->extra_sql = {file_rows(990'000, "2")};
    } else if (kind == "live-rows") {
        v.catalog->extra_sql = {file_rows(900'000, "NULL")};
    } else if (kind == "many-rows") { // more than a first estimate, less than a version may have
        v.catalog->extra_sql = {file_rows(20'000, "NULL")};
    } else if (kind == "files-json") {
        std::string text = R"({"tables":{"main.t":{"files":[)";
        for (std::uint64_t i = 0; text.size() < 60 * 1024 * 1024 - 200; ++i)
            text += (i == 0 ? "" : ",") + std::string(R"({"path":"main/t/ducklake-)") + std::to_string(i) +
                    R"(-0123456789abcdef.parquet","rows":10,"bytes":1000,"footer_bytes":100})";
        v.files_json_text = text + "]}}}";
    } else if (kind == "dataset-json") {
        // Many small values: the shape that costs a JSON tree the most per byte.
        std::string text = R"({"name":"big","title":"A big dataset.json","keywords":[)";
        while (text.size() < 15 * 1024 * 1024 - 100)
            text += "[1,2],";
        v.dataset_json_text = text + "[1]]}\n";
    } else if (kind == "refs-json") {
        // A well-formed version, and a refs.json just under its 16 MiB limit of short keys
        // and tiny values: the shape that costs a tree and a key check the most per byte.
        int status = publish_on_main(p, v);
        std::string text = R"({"HEAD":"ref: refs/heads/main","refs":{)";
        for (std::uint64_t i = 0; text.size() < 16 * 1024 * 1024 - 100; ++i)
            text += (i == 0 ? "\"refs/heads/" : ",\"refs/heads/") + std::to_string(i) + "\":0";
        write_file(p.root() / "refs.json", text + "}}\n");
        return status;
    } else if (kind == "attestation") {
        // A well-formed repository whose .fdl-mirror/attestation.json, planted by a co-tenant,
        // is 62 MiB of an envelope whose payload decodes to a statement of tiny values.
        int status = publish_on_main(p, v);
        std::string text = R"({"payloadType":"application/vnd.in-toto+json","payload":")";
        // base64 of "[0,0,0,…,0]": "WzAs" is "[0,", "MCwwLDAs" is "0,0,0,", "MF0=" is "0]".
        text += "WzAs";
        while (text.size() < 62 * 1024 * 1024)
            text += "MCwwLDAs";
        text += R"(MF0=","signatures":[{"keyid":"SHA256:x","sig":"AAAA"}]})";
        std::filesystem::create_directories(p.root() / ".fdl-mirror");
        write_file(p.root() / ".fdl-mirror" / "attestation.json", text + "\n");
        return status;
    } else {
        throw std::invalid_argument("memory-input: no kind " + kind);
    }
    return publish_on_main(p, v);
#else
    (void)root, (void)kind;
    std::fputs("fdl-test-publisher: built without DuckDB, cannot write catalogs\n", stderr);
    return 1;
#endif
}

} // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    try {
        std::optional<signing> sign = take_signing(args);
        bool can_sign = !args.empty() && (args[0] == "sample" || args[0] == "add");
        if (sign && !can_sign)
            throw std::invalid_argument("--sign is for sample and add only");
        if (args.size() == 2 && args[0] == "sample") {
            publisher p(args[1]);
            if (sign)
                p.sign_new_versions(sign->key, sign->ns);
            publish_sample(p);
            return 0;
        }
        if ((args.size() == 3 || args.size() == 4) && args[0] == "add")
            return add(args[1], args[2], args.size() == 4 ? std::stoul(args[3]) : 1000, sign);
        if ((args.size() == 2 || args.size() == 3) && args[0] == "lake")
            return lake(args[1], args.size() == 3 ? args[2] : "1.0");
        if (args.size() == 3 && args[0] == "memory-input")
            return memory_input(args[1], args[2]);
        if (args.size() == 2 && args[0] == "check") {
            auto problems = reader_visible_problems(args[1]);
            for (auto const& p : problems)
                std::fprintf(stderr, "%s\n", p.c_str());
            return problems.empty() ? 0 : 1;
        }
        if (args.size() == 5 && args[0] == "bench-spread")
            return bench_spread(args[1], std::stoul(args[2]), std::stoul(args[3]), std::stoul(args[4]));
        if (args.size() == 7 && args[0] == "bench")
            return bench(args[1], std::stoul(args[2]), std::stoul(args[3]), std::stoul(args[4]), std::stoul(args[5]),
                         std::stoul(args[6]));
    } catch (std::invalid_argument const& e) { // a usage error (std::stoul's included): usage follows
        std::fprintf(stderr, "fdl-test-publisher: %s\n", e.what());
    } catch (std::exception const& e) {
        std::fprintf(stderr, "fdl-test-publisher: %s\n", e.what());
        return 1;
    }
    std::fputs("usage: fdl-test-publisher sample ROOT [--sign KEY [--namespace NS]] | "
               "add ROOT BRANCH [DATA_BYTES] [--sign KEY [--namespace NS]] | "
               "bench ROOT VERSIONS SMALL_FILES SMALL_BYTES LARGE_FILES LARGE_BYTES | "
               "bench-spread ROOT VERSIONS FILES_PER_VERSION BYTES | lake ROOT [FORMAT] | check ROOT\n",
               stderr);
    return 2;
}
