// The scrub: the mirror's data files read again a slice at a time and checked against the
// ledger, so that a round covers them all; damage to the mirror's own bytes is a finding.

#include "core/sync/scrub.hpp"

#include "core/io/errors.hpp"
#include "core/store/forwarding_store.hpp"
#include "core/sync/errors.hpp"
#include "core/sync/ledger.hpp"
#include "core/sync/transfer_slots.hpp"
#include "tests/component/helpers.hpp"
#include "tests/support/in_flight_store.hpp"
#include "tests/support/run.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <set>

using namespace mirror;
using namespace mirror::test;
namespace fs = std::filesystem;

namespace {

/// Reads of data files (of keys under `prefix`) fail as a broken connection would;
/// everything else passes through.
class failing_data_reads final : public mirror::store::forwarding_store {
public:
    explicit failing_data_reads(mirror::store::store& inner, std::string prefix = "data/")
        : forwarding_store(inner), prefix_(std::move(prefix)) {}
    awaitable<result<void>> read(std::string key, mirror::io::byte_sink& out) override {
        if (key.starts_with(prefix_))
            co_return make_error(mirror::io::store_errc::transient, key + ": connection reset");
        co_return co_await inner().read(std::move(key), out);
    }

private:
    std::string prefix_;
};

struct scrubbed_mirror {
    temp_dir tmp;
    event_loop loop;
    std::unique_ptr<store::store> mirror;
    sync::data_ledger ledger;

    scrubbed_mirror() {
        publisher origin(tmp / "origin");
        publish_sample(origin);
        REQUIRE(sync_folders(tmp / "origin", tmp / "mirror").exit_code() == 0);
        mirror = open_folder(tmp / "mirror", false);
        auto loaded = loop(sync::load_ledger(*mirror));
        REQUIRE(loaded.has_value());
        ledger = std::move(*loaded);
        REQUIRE(ledger.size() >= 3);
    }
    sync::scrub_step_report step(sync::scrub_position& at, double fraction, double now) {
        return loop(sync::scrub_step(*mirror, at, fraction, nullptr, now));
    }
};

} // namespace

TEST_CASE("scrub: steps of a fraction cover every data file once per round, in order, and rounds restart") {
    scrubbed_mirror m;
    sync::scrub_position at;
    std::set<std::string> seen;
    std::uint64_t bytes = 0;
    int steps = 0;
    bool completed = false;
    while (!completed) {
        REQUIRE(++steps <= static_cast<int>(m.ledger.size()));
        std::string const before = at.after;
        auto r = m.step(at, 0.01, 1000 + steps);
        REQUIRE_FALSE(r.failure);
        CHECK(r.findings.empty());
        CHECK(r.files == 1); // 1 % of the bytes is less than any one file: one file a step
        CHECK(r.ledger_files == m.ledger.size());
        bytes += r.bytes;
        completed = r.round_completed;
        if (!completed) {
            CHECK(at.after > before);
            seen.insert(at.after);
            CHECK(at.round_started == 1001);
        }
    }
    CHECK(steps == static_cast<int>(m.ledger.size()));
    CHECK(seen.size() == m.ledger.size() - 1); // the last one completes the round
    std::uint64_t total = 0;
    for (auto const& [path, entry] : m.ledger)
        total += entry.bytes;
    CHECK(bytes == total);
    CHECK(at.last_round_completed == 1000 + steps);
    CHECK(at.after.empty());
    CHECK(at.round_bytes == 0);

    // The whole ledger in one step, and a new round after it.
    auto whole = m.step(at, 1.0, 5000);
    CHECK(whole.round_completed);
    CHECK(whole.files == m.ledger.size());
    CHECK(at.last_round_completed == 5000);
}

TEST_CASE("scrub: a data file changed, shortened or gone in the mirror is a finding naming it, and the round goes on") {
    scrubbed_mirror m;
    auto const& [first_path, first] = *m.ledger.begin();
    auto const& [second_path, second] = *std::next(m.ledger.begin());
    auto const& [third_path, third] = *std::next(m.ledger.begin(), 2);
    auto data = m.tmp / "mirror" / "data";
    auto flipped = read_file(data / first_path);
    flipped[10] ^= 0x20; // same size: only the digest tells
    write_file(data / first_path, flipped);
    fs::resize_file(data / second_path, second.bytes - 1);
    fs::remove(data / third_path);

    sync::scrub_position at;
    auto r = m.step(at, 1.0, 100);
    REQUIRE_FALSE(r.failure);
    CHECK(r.round_completed);
    CHECK(r.files == m.ledger.size());
    REQUIRE(r.findings.size() == 3);
    auto found = [&](sync::sync_errc code, std::string const& path) {
        for (auto const& f : r.findings)
            if (f.code == code && f.message.find(path) != std::string::npos && f.message.starts_with("mirror: "))
                return true;
        return false;
    };
    CHECK(found(sync::sync_errc::sha256_mismatch, first_path));
    CHECK(found(sync::sync_errc::size_mismatch, second_path));
    CHECK(found(sync::sync_errc::missing_file, third_path));
}

TEST_CASE("scrub: a read that fails for another reason stops the step where it was, to go on from there") {
    scrubbed_mirror m;
    sync::scrub_position at;
    auto first = m.step(at, 0.0, 100); // one file
    REQUIRE_FALSE(first.failure);
    REQUIRE(first.files == 1);
    std::string const checked = at.after;
    // The next read fails as a network would.
    failing_data_reads failing(*m.mirror);
    auto stopped = m.loop(sync::scrub_step(failing, at, 1.0, nullptr, 200));
    REQUIRE(stopped.failure);
    CHECK(stopped.findings.empty());
    CHECK(at.after == checked); // not skipped
    CHECK_FALSE(stopped.round_completed);
    auto resumed = m.step(at, 1.0, 300);
    CHECK(resumed.round_completed);
    CHECK(resumed.files == m.ledger.size() - 1);
}

TEST_CASE("scrub: a mirror without fdl.json or with a damaged ledger fails the step, naming it") {
    scrubbed_mirror m;
    auto segments = files_under(m.tmp / "mirror" / ".fdl-mirror" / "ledger");
    REQUIRE_FALSE(segments.empty());
    write_file(m.tmp / "mirror" / ".fdl-mirror" / "ledger" / segments.front(), "{not json");
    sync::scrub_position at;
    auto r = m.step(at, 1.0, 1);
    REQUIRE(r.failure);
    CHECK(r.failure->message.find("mirror") != std::string::npos);
    CHECK(r.failure->message.find(segments.front()) != std::string::npos);
    fs::remove(m.tmp / "mirror" / "fdl.json");
    r = m.step(at, 1.0, 2);
    REQUIRE(r.failure);
    CHECK(r.failure->message.find("fdl.json") != std::string::npos);
}

// Overlapped reads (issue 16): a step reads up to `concurrency` files at once, and covers,
// finds and moves exactly as a step reading one at a time.
namespace {

/// A mirror of many data files (publish_many_files), some damaged.
struct many_files_mirror {
    temp_dir tmp;
    event_loop loop;
    std::unique_ptr<store::store> mirror;
    std::vector<std::string> paths;

    many_files_mirror() {
        publisher origin(tmp / "origin");
        paths = publish_many_files(origin, 24);
        REQUIRE(sync_folders(tmp / "origin", tmp / "mirror").exit_code() == 0);
        mirror = open_folder(tmp / "mirror", false);
        flip_byte(data(3));
        fs::resize_file(data(10), fs::file_size(data(10)) - 1);
        flip_byte(data(17));
    }
    fs::path data(std::size_t i) const { return tmp / "mirror" / "data" / paths.at(i); }
};

/// What a step did, one line, to compare two steps.
std::string rendered(sync::scrub_step_report const& r, sync::scrub_position const& at) {
    std::string out = std::to_string(r.files) + " files, " + std::to_string(r.bytes) + " bytes" +
                      (r.round_completed ? ", round completed" : "") + "; after '" + at.after + "', " +
                      std::to_string(at.round_bytes) + " round bytes";
    for (auto const& f : r.findings)
        out += "; " + sync::kind_of(f.code) + ": " + f.message;
    if (r.failure)
        out += "; failure " + r.failure->message;
    return out;
}

/// The steps of one round at `fraction`, reading through `through` up to `concurrency` at once.
std::vector<std::string> round_of(many_files_mirror& m, store::store& through, double fraction,
                                  std::size_t concurrency) {
    std::vector<std::string> steps;
    sync::scrub_position at;
    for (int step = 1; step <= 30; ++step) {
        auto r = m.loop(sync::scrub_step(through, at, fraction, nullptr, step, concurrency));
        steps.push_back(rendered(r, at));
        if (r.round_completed || r.failure)
            break;
    }
    return steps;
}

} // namespace

TEST_CASE("scrub: a step overlaps its reads, at most `concurrency` in flight, and goes as far and finds what one "
          "read at a time does") {
    many_files_mirror m;
    for (double fraction : {1.0, 0.3}) {
        CAPTURE(fraction);
        in_flight_store one_at_a_time(*m.mirror);
        auto serial = round_of(m, one_at_a_time, fraction, 1);
        CHECK(one_at_a_time.most_in_flight == 1);
        in_flight_store overlapped(*m.mirror);
        auto parallel = round_of(m, overlapped, fraction, 8);
        CHECK(overlapped.most_in_flight > 1);
        CHECK(overlapped.most_in_flight <= 8);
        CHECK(overlapped.requests == one_at_a_time.requests);
        CHECK(parallel == serial);
        REQUIRE_FALSE(serial.empty());
        CHECK(serial.back().find("round completed") != std::string::npos);
        if (fraction == 1.0) {
            REQUIRE(serial.size() == 1);
            CHECK(serial.front().find(m.paths[3]) < serial.front().find(m.paths[10])); // in name order
            CHECK(serial.front().find(m.paths[10]) < serial.front().find(m.paths[17]));
        } else {
            CHECK(serial.size() > 1);
        }
    }
}

TEST_CASE("scrub: with the daemon's shared transfer slots, its reads and the passes' copies together stay within "
          "them") {
    many_files_mirror m;
    // max_transfers 3, one slot held by a pass's copy: the scrub, asked for 8 at once, gets 2.
    sync::transfer_slots shared(3);
    auto held = m.loop([&]() -> awaitable<sync::transfer_slots::slot> { co_return co_await shared.acquire(); }());
    in_flight_store capped(*m.mirror);
    sync::scrub_position at;
    auto r = m.loop(sync::scrub_step(capped, at, 1.0, nullptr, 100, 8, &shared));
    CHECK(r.round_completed);
    CHECK(r.files == m.paths.size());
    CHECK(r.findings.size() == 3);
    CHECK(capped.most_in_flight == 2);
    CHECK(shared.in_use() == 1); // the scrub's slots came back; the copy's is still held
    // Without the shared slots the same step overlaps up to its own concurrency.
    in_flight_store free_running(*m.mirror);
    sync::scrub_position again;
    m.loop(sync::scrub_step(free_running, again, 1.0, nullptr, 100, 8));
    CHECK(free_running.most_in_flight > 2);
}

TEST_CASE("scrub: with reads overlapped, a read that fails mid-slice stops the step just before that file") {
    many_files_mirror m;
    // The 13th file's read breaks; the files after it are read too, but count for nothing.
    failing_data_reads failing(*m.mirror, "data/" + m.paths[12]);
    for (std::size_t concurrency : {1, 8}) {
        CAPTURE(concurrency);
        in_flight_store late(failing);
        sync::scrub_position at;
        auto r = m.loop(sync::scrub_step(late, at, 1.0, nullptr, 100, concurrency));
        REQUIRE(r.failure);
        CHECK(r.failure->message.find(m.paths[12]) != std::string::npos);
        CHECK(r.files == 12);
        CHECK(at.after == m.paths[11]); // the next step reads the 13th again
        CHECK_FALSE(r.round_completed);
        REQUIRE(r.findings.size() == 2); // the 4th and the 11th, not the 18th
        CHECK(r.findings[0].message.find(m.paths[3]) != std::string::npos);
        CHECK(r.findings[1].message.find(m.paths[10]) != std::string::npos);
        if (concurrency > 1)
            CHECK(late.most_in_flight > 1);
    }
}

TEST_CASE("scrub: a ledger whose segments interleave in name order and record a path twice is walked in name order, "
          "each file once, with its first record, as a ledger held whole would be") {
    many_files_mirror m;
    auto ledger_dir = m.tmp / "mirror" / ".fdl-mirror" / "ledger";
    auto whole = m.loop(sync::load_ledger(*m.mirror));
    REQUIRE(whole.has_value());
    REQUIRE(whole->size() >= 20);
    // Re-split the ledger: file n goes to segment n % 5, so that every segment spans the
    // whole name range; a last segment records one path again with a size that would fail it.
    fs::remove_all(ledger_dir);
    std::vector<sync::data_ledger> segments(5);
    std::size_t n = 0;
    for (auto const& [path, entry] : *whole)
        segments[n++ % segments.size()].emplace(path, entry);
    for (std::size_t i = 0; i < segments.size(); ++i)
        write_file(ledger_dir / ("019a2f10-0c4d-7e88-a1b2-55c0d9e3f7a" + std::to_string(i) + ".json"),
                   sync::render_ledger_segment(segments[i]));
    auto const& [twice, recorded] = *std::next(whole->begin(), 7);
    write_file(ledger_dir / "019a2f10-0c4d-7e88-a1b2-55c0d9e3f7a9.json",
               sync::render_ledger_segment({{twice, sync::ledger_entry{recorded.bytes + 1, {}}}}));

    for (double fraction : {0.05, 0.3}) {
        CAPTURE(fraction);
        // The slices one step at a time would take from the whole ledger, in name order.
        std::uint64_t total = 0;
        for (auto const& [path, entry] : *whole)
            total += entry.bytes;
        auto const budget = static_cast<std::uint64_t>(std::ceil(static_cast<double>(total) * fraction));
        std::vector<std::string> expected_ends;
        std::uint64_t planned = 0;
        for (auto it = whole->begin(); it != whole->end(); ++it) {
            planned += it->second.bytes;
            if (planned >= budget || std::next(it) == whole->end()) {
                expected_ends.push_back(it->first);
                planned = 0;
            }
        }
        std::vector<std::string> ends;
        std::size_t findings = 0;
        sync::scrub_position at;
        for (int step = 1; step <= 100; ++step) {
            auto r = m.loop(sync::scrub_step(*m.mirror, at, fraction, nullptr, step, 4));
            REQUIRE_FALSE(r.failure);
            CHECK(r.ledger_files == whole->size());
            CHECK(r.ledger_bytes == total);
            findings += r.findings.size();
            ends.push_back(r.round_completed ? whole->rbegin()->first : at.after);
            if (r.round_completed)
                break;
        }
        CHECK(ends == expected_ends);
        CHECK(findings == 3); // the three damaged files; not the path recorded twice
    }
}
