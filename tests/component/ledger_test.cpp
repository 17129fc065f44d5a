// The mirror's ledger: the size and SHA-256 of each data file at copy time, so that an
// audit proves the mirror still holds the same bytes.

#include "core/sync/ledger.hpp"
#include "core/io/errors.hpp"

#include "core/store/fault_store.hpp"
#include "tests/component/helpers.hpp"
#include "tests/support/in_flight_store.hpp"
#include "tests/support/run.hpp"
#include "tests/support/temp_dir.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <doctest/doctest.h>

using namespace mirror;
using namespace mirror::test;
namespace fs = std::filesystem;

namespace {

sync::data_ledger ledger_of(fs::path const& root) {
    auto repo = open_folder(root, false);
    net::io_context io(1);
    std::optional<result<sync::data_ledger>> out;
    net::co_spawn(io, sync::load_ledger(*repo), [&](std::exception_ptr, result<sync::data_ledger> r) { out = r; });
    io.run();
    REQUIRE(out->has_value());
    return out->value();
}

void check_ledger_covers_origin_data(fs::path const& origin, fs::path const& mirror) {
    auto ledger = ledger_of(mirror);
    for (auto const& f : files_under(origin / "data")) {
        CAPTURE(f);
        auto it = ledger.find(f);
        REQUIRE(it != ledger.end());
        auto bytes = read_file(origin / "data" / f);
        CHECK(it->second.bytes == bytes.size());
        CHECK(it->second.sha256 == verify::sha256_of(bytes));
    }
}

} // namespace

TEST_CASE("each data file is recorded once, with its size and digest at copy time") {
    temp_dir tmp;
    publisher origin(tmp / "origin");
    auto sample = publish_sample(origin);
    REQUIRE(sync_folders(tmp / "origin", tmp / "mirror").exit_code() == 0);
    check_ledger_covers_origin_data(tmp / "origin", tmp / "mirror");
    // One segment per version that brought new data files; the last version only reuses.
    auto segments = files_under(tmp / "mirror" / ".fdl-mirror" / "ledger");
    CHECK(segments.size() == 3);
    CHECK(std::find(segments.begin(), segments.end(), sample.main.back() + ".json") == segments.end());
}

TEST_CASE("an audit of the mirror finds a data file whose bytes changed after the copy") {
    temp_dir tmp;
    publisher origin(tmp / "origin");
    publish_sample(origin);
    REQUIRE(sync_folders(tmp / "origin", tmp / "mirror").exit_code() == 0);
    auto clean = audit_folder(tmp / "mirror");
    CHECK(clean.exit_code() == 0);
    CHECK(clean.versions.front().data_files_proven == clean.versions.front().data_files);

    auto data = tmp / "mirror" / "data" / "main/towns/ducklake-0003.parquet";
    auto bytes = read_file(data);
    bytes[10] ^= 0x20; // same size: only the ledger can tell
    write_file(data, bytes);
    auto damaged = audit_folder(tmp / "mirror");
    CHECK(damaged.exit_code() == 1);
    // Every version that needs the file fails, not only the first one audited.
    std::size_t failing = 0;
    for (auto const& v : damaged.versions)
        failing += v.problems.empty() ? 0 : 1;
    CHECK(failing == 2); // main[1] and main[2] use ducklake-0003
    bool named = false;
    for (auto const& v : damaged.versions)
        for (auto const& p : v.problems)
            named = named || (p.code == sync::sync_errc::sha256_mismatch &&
                              p.message.find("ducklake-0003.parquet: sha256 is") != std::string::npos &&
                              p.message.find("the mirror's ledger") != std::string::npos);
    CHECK(named);
}

TEST_CASE("data files copied by an interrupted pass are recorded by the next one") {
    temp_dir tmp;
    publisher origin(tmp / "origin");
    publish_sample(origin);
    auto origin_store = open_folder(tmp / "origin", false);
    auto mirror_store = open_folder(tmp / "mirror", true);
    // fdl.json is write 1, the first version's data file write 2: fail the ledger (write 3).
    store::fault_store failing(*mirror_store, 3, store::fault_action::fail);
    auto stopped = sync_stores(*origin_store, failing);
    REQUIRE(failing.tripped());
    REQUIRE(fs::exists(tmp / "mirror" / "data/main/population/ducklake-0001.parquet"));
    CHECK(files_under(tmp / "mirror" / ".fdl-mirror").empty()); // the ledger write failed
    CHECK(stopped.exit_code() == 3);
    REQUIRE(sync_stores(*origin_store, *mirror_store).exit_code() == 0);
    check_ledger_covers_origin_data(tmp / "origin", tmp / "mirror");
}

TEST_CASE("the ledger's walk hands each path once, with its first record, a segment at a time in order, reading "
          "several at once when asked, and stops on an error") {
    temp_dir tmp;
    auto dir = tmp / ".fdl-mirror" / "ledger";
    auto entry = [](std::uint64_t bytes, char fill) {
        return sync::ledger_entry{bytes, verify::sha256_of(std::string(bytes, fill))};
    };
    // Segments list in name order (versions' ids ending in a, b, c, d). b records x/2 again
    // with another size, and c records only paths handed already.
    auto segment = [&](char last) { return dir / ("019a2f10-0c4d-7e88-a1b2-55c0d9e3f7a" + std::string(1, last) + ".json"); };
    write_file(segment('a'), sync::render_ledger_segment({{"x/2", entry(2, 'a')}, {"x/9", entry(9, 'a')}}));
    write_file(segment('b'), sync::render_ledger_segment({{"x/1", entry(1, 'b')}, {"x/2", entry(5, 'b')}}));
    write_file(segment('c'), sync::render_ledger_segment({{"x/9", entry(7, 'c')}}));
    write_file(segment('d'), sync::render_ledger_segment({{"x/0", entry(3, 'd')}}));
    // Only a version's id names a segment: anything else there is not read.
    write_file(dir / "planted.json", "not even JSON");
    auto folder = open_folder(tmp.path(), false);
    event_loop loop;
    std::vector<std::vector<std::string>> handed; // per call: "path bytes"
    sync::ledger_visitor take = [&](sync::data_ledger& entries) -> awaitable<result<void>> {
        handed.emplace_back();
        for (auto const& [path, recorded] : entries)
            handed.back().push_back(path + " " + std::to_string(recorded.bytes));
        co_return result<void>();
    };
    for (std::size_t concurrency : {1, 3}) {
        CAPTURE(concurrency);
        handed.clear();
        in_flight_store repo(*folder);
        REQUIRE(loop(sync::for_each_new_ledger_entries(repo, take, sync::ledger_reads{concurrency})).has_value());
        CHECK(handed == std::vector<std::vector<std::string>>{{"x/2 2", "x/9 9"}, {"x/1 1"}, {"x/0 3"}});
        CHECK(repo.requests == 4);
        CHECK(repo.most_in_flight == std::min<std::size_t>(concurrency, 3));
    }

    // An error from the visitor stops the walk: the next segment is never handed on.
    int calls = 0;
    sync::ledger_visitor refuse = [&](sync::data_ledger&) -> awaitable<result<void>> {
        ++calls;
        co_return make_error(sync::sync_errc::stopped, "enough");
    };
    auto stopped = loop(sync::for_each_new_ledger_entries(*folder, refuse, sync::ledger_reads{3}));
    REQUIRE_FALSE(stopped.has_value());
    CHECK(stopped.error().message == "enough");
    CHECK(calls == 1);

    // A damaged segment fails the walk, naming it, after the segments before it and
    // whether or not the ones after it were read already.
    write_file(segment('b'), "{\"data_files\": 3}");
    for (std::size_t concurrency : {1, 3}) {
        CAPTURE(concurrency);
        handed.clear();
        auto damaged = loop(sync::for_each_new_ledger_entries(*folder, take, sync::ledger_reads{concurrency}));
        REQUIRE_FALSE(damaged.has_value());
        CHECK(damaged.error().message.find("f7ab.json") != std::string::npos);
        CHECK(handed.size() == 1); // the first segment's entries came before it
    }

    // A segment larger than a third of the walk's memory is refused before it is read,
    // named, with the limit (issue 45: a peer's 173 MiB segment).
    write_file(segment('b'), sync::render_ledger_segment({{"x/1", entry(1, 'b')}}) + std::string(2 << 20, ' '));
    in_flight_store counted(*folder);
    auto too_large =
        loop(sync::for_each_new_ledger_entries(counted, take, sync::ledger_reads{1, nullptr, std::size_t{3} << 20}));
    REQUIRE_FALSE(too_large.has_value());
    CHECK(too_large.error().code == io::store_errc::too_large);
    CHECK(too_large.error().message.find("f7ab.json: a ledger segment of 3 MiB, more than the 1 MiB") !=
          std::string::npos);
    CHECK(counted.requests == 0); // refused from the listing, before any read
}
