// The check of the origin's data files against what the mirror copied (by size): a file
// deleted or resized at the origin is a violation naming it, whether the origin can be
// listed (a folder) or only asked file by file (as over HTTP).

#include "core/sync/origin_data_check.hpp"

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

#include <fstream>

using namespace mirror;
using namespace mirror::test;
namespace fs = std::filesystem;

namespace {

/// A store that cannot list, as an HTTP origin: only stat and read pass through.
class unlisted final : public mirror::store::forwarding_store {
public:
    explicit unlisted(mirror::store::store& inner) : forwarding_store(inner) {}
    mirror::store::store_caps caps() const override {
        auto caps = inner().caps();
        caps.can_list = false;
        return caps;
    }
    awaitable<result<mirror::store::object_info>> stat(std::string key) override {
        stats += 1;
        if (key == failing_key)
            co_return make_error(mirror::io::store_errc::transient, key + ": connection reset");
        co_return co_await inner().stat(std::move(key));
    }
    /// As caps() says: the store's own refusal, unsupported.
    awaitable<result<void>> list(std::string prefix, std::function<result<void>(mirror::store::list_entry)> each) override {
        return mirror::store::store::list(std::move(prefix), std::move(each));
    }
    int stats = 0;
    std::string failing_key; ///< its stat fails, as a connection reset
};

/// A sample repository in tmp/origin, mirrored into tmp/mirror.
struct mirrored_sample {
    temp_dir tmp;
    mirrored_sample() {
        publisher origin(tmp / "origin");
        publish_sample(origin);
        REQUIRE(sync_folders(tmp / "origin", tmp / "mirror").exit_code() == 0);
    }
};

/// The same, with the mirror open and its ledger's paths read (at least three data files).
struct mirrored_with_ledger : mirrored_sample {
    event_loop loop;
    std::unique_ptr<store::store> mirror = open_folder(tmp / "mirror", false);
    std::vector<std::string> paths = [this] {
        std::vector<std::string> walked;
        sync::ledger_visitor take = [&](sync::data_ledger& entries) -> awaitable<result<void>> {
            for (auto const& [path, entry] : entries)
                walked.push_back(path);
            co_return result<void>();
        };
        REQUIRE(loop(sync::for_each_new_ledger_entries(*mirror, take)).has_value());
        REQUIRE(walked.size() >= 3);
        return walked;
    }();
    /// The path (below data/) of the ledger's n-th data file, in the order the check walks it.
    std::string const& file(std::size_t n) const { return paths.at(n); }
};

bool names(std::vector<error> const& found, sync::sync_errc code, std::string const& path) {
    for (auto const& e : found)
        if (e.code == code && e.message.find(path) != std::string::npos && e.message.starts_with("origin: "))
            return true;
    return false;
}

} // namespace

TEST_CASE("origin data check: an untouched origin has nothing to report, listed or asked file by file") {
    mirrored_sample m;
    auto const& tmp = m.tmp;
    event_loop loop;
    auto origin = open_folder(tmp / "origin", false);
    auto mirror = open_folder(tmp / "mirror", false);
    auto listed = loop(sync::check_origin_data(*origin, *mirror));
    REQUIRE_FALSE(listed.failure);
    CHECK(listed.violations.empty());
    CHECK(listed.files >= 3);
    unlisted asked(*origin);
    auto one_by_one = loop(sync::check_origin_data(asked, *mirror));
    REQUIRE_FALSE(one_by_one.failure);
    CHECK(one_by_one.violations.empty());
    CHECK(asked.stats == static_cast<int>(one_by_one.files));
}

TEST_CASE_FIXTURE(mirrored_with_ledger, "origin data check: a data file deleted or resized at the origin is a violation "
                                        "naming it") {
    auto const& gone = file(0);
    auto const& grown = file(1);
    fs::remove(tmp / "origin" / "data" / gone);
    {
        std::ofstream more(tmp / "origin" / "data" / grown, std::ios::app | std::ios::binary);
        more << "x";
    }
    auto origin = open_folder(tmp / "origin", false);
    for (bool listing : {true, false}) {
        CAPTURE(listing);
        unlisted asked(*origin);
        auto r = listing ? loop(sync::check_origin_data(*origin, *mirror)) : loop(sync::check_origin_data(asked, *mirror));
        REQUIRE_FALSE(r.failure);
        CHECK(r.violations.size() == 2);
        CHECK(names(r.violations, sync::sync_errc::file_deleted_at_origin, "data/" + gone));
        CHECK(names(r.violations, sync::sync_errc::data_file_changed_at_origin, "data/" + grown));
        CHECK(sync::kind_of(sync::sync_errc::data_file_changed_at_origin) == "data_file_changed_at_origin");
    }
}

TEST_CASE("origin data check: a mirror that cannot be read fails the check, naming it") {
    mirrored_sample m;
    auto const& tmp = m.tmp;
    fs::remove(tmp / "mirror" / "fdl.json");
    event_loop loop;
    auto origin = open_folder(tmp / "origin", false);
    auto mirror = open_folder(tmp / "mirror", false);
    auto r = loop(sync::check_origin_data(*origin, *mirror));
    REQUIRE(r.failure);
    CHECK(r.failure->message.find("mirror") != std::string::npos);
    CHECK(r.failure->message.find("fdl.json") != std::string::npos);
}

TEST_CASE_FIXTURE(mirrored_with_ledger, "origin data check: an origin asked file by file is asked up to `concurrency` "
                                        "at once, within the shared transfer slots, with the report of one ask at a time") {
    fs::remove(tmp / "origin" / "data" / file(1));
    auto origin = open_folder(tmp / "origin", false);

    in_flight_store alone(*origin);
    alone.hide_listing = true;
    auto one_at_a_time = loop(sync::check_origin_data(alone, *mirror));
    CHECK(alone.most_in_flight == 1);
    REQUIRE_FALSE(one_at_a_time.failure);
    CHECK(one_at_a_time.violations.size() == 1);

    in_flight_store overlapped(*origin);
    overlapped.hide_listing = true;
    auto together = loop(sync::check_origin_data(overlapped, *mirror, 8));
    CHECK(overlapped.most_in_flight > 1);
    CHECK(overlapped.most_in_flight <= 8);
    REQUIRE_FALSE(together.failure);
    CHECK(together.files == one_at_a_time.files);
    REQUIRE(together.violations.size() == 1);
    CHECK(together.violations[0].message == one_at_a_time.violations[0].message);

    // max_transfers 2, one slot held by a pass's copy: the check, asked for 8 at once, gets 1.
    sync::transfer_slots shared(2);
    auto held = loop([&]() -> awaitable<sync::transfer_slots::slot> { co_return co_await shared.acquire(); }());
    in_flight_store capped(*origin);
    capped.hide_listing = true;
    auto within = loop(sync::check_origin_data(capped, *mirror, 8, &shared));
    CHECK(capped.most_in_flight == 1);
    CHECK(within.files == one_at_a_time.files);
    CHECK(shared.in_use() == 1); // the check's slots came back; the copy's is still held
}

TEST_CASE_FIXTURE(mirrored_with_ledger, "origin data check: an ask that fails stops the check at that file, one at a "
                                        "time or overlapped") {
    auto const& gone = file(0);
    auto const& broken = file(2);
    fs::remove(tmp / "origin" / "data" / gone);
    auto origin = open_folder(tmp / "origin", false);
    for (std::size_t concurrency : {1, 8}) {
        CAPTURE(concurrency);
        unlisted asked(*origin);
        asked.failing_key = "data/" + broken;
        auto r = loop(sync::check_origin_data(asked, *mirror, concurrency));
        REQUIRE(r.failure);
        CHECK(r.failure->message.find("origin") != std::string::npos);
        CHECK(r.failure->message.find(broken) != std::string::npos);
        CHECK(r.files == 2); // the two before it
        REQUIRE(r.violations.size() == 1);
        CHECK(names(r.violations, sync::sync_errc::file_deleted_at_origin, "data/" + gone));
    }
}

TEST_CASE("origin data check: the origin's listing and the mirror's ledger are walked within the memory given") {
    // Issue 45: a scheduled audit held a planted ledger segment or a hostile listing whole.
    mirrored_sample m;
    event_loop loop;
    auto origin = open_folder(m.tmp / "origin", false);
    auto mirror = open_folder(m.tmp / "mirror", false);
    auto within = loop(sync::check_origin_data(*origin, *mirror, 1, nullptr, std::size_t{4} << 20));
    REQUIRE_FALSE(within.failure);
    CHECK(within.files >= 3);
    // Less than the listing and a segment's tree need: the check fails, naming the limit.
    auto tight = loop(sync::check_origin_data(*origin, *mirror, 1, nullptr, 4096));
    REQUIRE(tight.failure);
    INFO(tight.failure->message);
    CHECK(tight.failure->message.find("more than this process allows it (memory_limit)") != std::string::npos);
    // And a listing alone past it: the origin's, refused as it is read.
    auto listing = loop(sync::check_origin_data(*origin, *mirror, 1, nullptr, 200));
    REQUIRE(listing.failure);
    CHECK(listing.failure->code == sync::sync_errc::over_memory_limit);
    CHECK(listing.failure->message.find("origin: ") == 0);
    CHECK(listing.failure->message.find("its listing would keep more than") != std::string::npos);
}
