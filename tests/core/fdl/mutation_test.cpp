// Hostile input: thousands of mutations of valid FDL files (bytes flipped, inserted,
// deleted, truncated) must each parse or be refused with a message that names the file,
// never crash. CI runs this under AddressSanitizer and UBSan too.

#include "core/fdl/version_record.hpp"
#include <doctest/doctest.h>

#include "core/fdl/files_index.hpp"
#include "core/fdl/refs.hpp"
#include "core/fdl/repo_settings.hpp"
#include "core/fdl/small_files.hpp"

#include <functional>
#include <random>
#include <string>

using namespace mirror;
using namespace mirror::fdl;

namespace {

std::string mutate(std::string text, std::mt19937& random) {
    auto pick = [&](std::size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(random); };
    int edits = 1 + static_cast<int>(pick(4));
    for (int i = 0; i < edits && !text.empty(); ++i) {
        std::size_t at = pick(text.size());
        switch (pick(5)) {
        case 0: text[at] = static_cast<char>(pick(256)); break;            // any byte, NUL and non-UTF-8 included
        case 1: text.insert(at, 1, "{}[]\",:\\0-e."[pick(13)]); break;      // structure
        case 2: text.erase(at, 1 + pick(8)); break;
        case 3: text.resize(at); break;                                     // truncated
        default: text.insert(at, text.substr(pick(text.size()), pick(30))); // repeated pieces
        }
    }
    return text;
}

template <class Parse>
void survives_mutations(std::string const& valid, std::string const& file, Parse parse) {
    std::mt19937 random(12345); // fixed: a failure is reproducible
    REQUIRE_MESSAGE(parse(valid).has_value(), "the unmutated sample must parse: " << file);
    for (int i = 0; i < 3000; ++i) {
        std::string text = mutate(valid, random);
        auto parsed = parse(text);
        if (!parsed) {
            CAPTURE(text);
            REQUIRE(parsed.error().message.starts_with(file));
            REQUIRE(parsed.error().code);
        }
    }
}

constexpr char const* version_json = R"({"fdl":"0.1","id":"019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c","seq":12,
"parents":["019a2f10-0c4d-7e88-a1b2-55c0d9e3f7aa"],"created_at":"2026-10-30T09:00:00Z","author":{"name":"example"},
"catalog":{"path":"ducklake.duckdb","storage":"duckdb-v1.5.0","bytes":4194304,
"sha256":"9f2c000000000000000000000000000000000000000000000000000000000000"},
"dataset":{"path":"dataset.json","bytes":2048,"sha256":"4c1d000000000000000000000000000000000000000000000000000000000000"},
"ducklake":{"format":"1.0","snapshot_id":345,"snapshots":[301,345]},
"files":{"path":"files.json","bytes":1536,"sha256":"7a0e000000000000000000000000000000000000000000000000000000000000"},
"annotations":{}})";

constexpr char const* files_json = R"({"tables":{"main.population":{"files":[{"path":"main/population/ducklake-1.parquet",
"rows":1741,"bytes":52311,"footer_bytes":2048,"deletes":{"path":"main/population/ducklake-2-delete.parquet","rows":3,
"bytes":812}}],"renamed_columns":true}}})";

} // namespace

TEST_CASE("mutated version.json files parse or are refused, naming the file") {
    survives_mutations(version_json, "versions/x/version.json",
                       [](std::string const& t) { return parse_version_record(t, "versions/x/version.json"); });
}

TEST_CASE("mutated files.json files parse or are refused, naming the file") {
    survives_mutations(files_json, "versions/x/files.json",
                       [](std::string const& t) { return parse_files_index(t, "versions/x/files.json"); });
}

TEST_CASE("mutated fdl.json, refs.json, dataset.json and expired.json parse or are refused") {
    survives_mutations(R"({"fdl":"0.1","id":"5f0c8a52","data_dir":"data/","signers":["a ssh-ed25519 AAAA"],
"catalog_formats":[{"ducklake":"1.1"},{"ducklake":"1.0","until":"2027-03-31"}]})",
                       "fdl.json", [](std::string const& t) { return parse_repo_settings(t); });
    survives_mutations(R"({"HEAD":"ref: refs/heads/main","refs":{"refs/heads/main":"019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c",
"refs/tags/v1":"019a2f10-0c4d-7e88-a1b2-55c0d9e3f7aa"}})",
                       "refs.json", [](std::string const& t) { return parse_refs_json(t); });
    survives_mutations(R"({"name":"population","title":"Population","extensions":{"x":1}})", "d.json",
                       [](std::string const& t) { return parse_dataset(t, "d.json"); });
    survives_mutations(R"({"reason":"withdrawn","expired_at":"2026-11-01"})", "e.json",
                       [](std::string const& t) { return parse_expiry(t, "e.json"); });
}
