// `sync` by hand into a mirror that claims conditional writes: whether the server honours
// them is asked once and remembered in the mirror (issue 33, section 5), so that a run
// costs the probe's requests only when the record is missing, old, of another server or
// unreadable. The stores are in memory and counted; the passes are real.

#include "daemon/cli/sync_lease.hpp"

#include "core/coord/probe.hpp"
#include "core/store/local_store.hpp"

#include "tests/support/counting_store.hpp"
#include "tests/support/memory_store.hpp"
#include "tests/support/publisher.hpp"
#include "tests/support/run.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

#include <algorithm>

using namespace mirror;
using namespace std::chrono_literals;

namespace {

struct sync_fixture {
    test::temp_dir tmp;
    test::event_loop run_on;
    std::unique_ptr<store::local_store> origin;
    std::shared_ptr<test::memory_bucket> bucket = std::make_shared<test::memory_bucket>();
    test::memory_store mirror{bucket, "repo/", "rgw"};

    sync_fixture() {
        test::publisher p(tmp.path() / "origin");
        test::publish_sample(p);
        origin = std::move(*store::local_store::open(tmp.path() / "origin", false));
    }

    /// Runs one sync as the command does, through a store that counts its calls; returns
    /// the calls that touched a probe object.
    std::size_t sync_counting_probes(sync::sync_report* report_out = nullptr) {
        test::counting_store counted(mirror);
        sync::sync_options options; // named: g++ 12 frees a braced temporary passed to a coroutine twice
        auto report = run_on(daemon::sync_holding_lease(*origin, counted, counted, options, nullptr));
        CHECK_MESSAGE(!report.fatal, report.fatal->message);
        auto probing = [](std::vector<std::string> const& calls) {
            return std::count_if(calls.begin(), calls.end(),
                                 [](auto const& call) { return call.find(".fdl-mirror/probe-") != std::string::npos; });
        };
        if (report_out)
            *report_out = std::move(report);
        return static_cast<std::size_t>(probing(counted.writes) + probing(counted.conditional));
    }

    std::optional<coord::probe_record> record() {
        auto found = bucket->objects.find("repo/" + std::string(coord::probe_record_key));
        if (found == bucket->objects.end())
            return std::nullopt;
        auto parsed = coord::parse_probe_record(found->second.bytes, "record");
        REQUIRE_MESSAGE(parsed.has_value(), parsed.error().message);
        return *parsed;
    }

    void keep_record(coord::probe_record const& record) {
        bucket->put("repo/" + std::string(coord::probe_record_key), coord::render_probe_record(record));
    }
};

std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

constexpr std::int64_t day_ms = 24 * 3600 * 1000;

} // namespace

TEST_CASE("sync probes the mirror's conditional writes once, then takes the answer the mirror keeps") {
    sync_fixture f;
    CHECK(f.sync_counting_probes() == 6); // remove, create, two that must lose, the right tag, remove
    auto kept = f.record();
    REQUIRE(kept);
    CHECK(kept->server == "mem://rgw");
    CHECK(kept->honoured);
    CHECK(std::abs(kept->probed_at_ms - now_ms()) < 60'000);

    CHECK(f.sync_counting_probes() == 0);
    CHECK(f.sync_counting_probes() == 0);
    CHECK(f.record()->probed_at_ms == kept->probed_at_ms); // not rewritten either
    CHECK(f.bucket->writes["repo/.fdl-mirror/lease"] > 0); // and the lease still taken each time
}

TEST_CASE("a kept answer is asked again when it is of another server, a month old, from the future or unreadable") {
    sync_fixture f;
    SUBCASE("another server: the same bucket behind another endpoint") {
        f.keep_record({"https://elsewhere:443", true, now_ms()});
    }
    SUBCASE("thirty days old") {
        f.keep_record({"mem://rgw", true, now_ms() - 30 * day_ms - 1000});
    }
    SUBCASE("dated a day ahead") {
        f.keep_record({"mem://rgw", true, now_ms() + day_ms});
    }
    SUBCASE("not JSON") {
        f.bucket->put("repo/.fdl-mirror/conditional-writes", "{\"server\": ");
    }
    SUBCASE("a field missing") {
        f.bucket->put("repo/.fdl-mirror/conditional-writes", "{\"server\": \"mem://rgw\", \"probed_at_ms\": 1}");
    }
    CHECK(f.sync_counting_probes() == 6);
    auto kept = f.record();
    REQUIRE(kept);
    CHECK(kept->server == "mem://rgw");
    CHECK(std::abs(kept->probed_at_ms - now_ms()) < 60'000);
    CHECK(f.sync_counting_probes() == 0);
}

TEST_CASE("a record younger than a month of this server is taken as it is, true or false") {
    sync_fixture f;
    f.keep_record({"mem://rgw", false, now_ms() - 29 * day_ms});
    sync::sync_report report;
    CHECK(f.sync_counting_probes(&report) == 0);
    bool const warned = std::any_of(report.warnings.begin(), report.warnings.end(), [](auto const& w) {
        return w.find("does not honour conditional writes") != std::string::npos;
    });
    CHECK(warned);
    CHECK(f.bucket->writes["repo/.fdl-mirror/lease"] == 0); // no lease on a store that ignores its conditions
}

TEST_CASE("a server that ignores conditions is remembered as such: the warning stays, the probe is not repeated") {
    sync_fixture f;
    f.bucket->honours_conditions = false;
    sync::sync_report report;
    CHECK(f.sync_counting_probes(&report) > 0);
    REQUIRE(f.record());
    CHECK(!f.record()->honoured);
    CHECK(!report.warnings.empty());
    CHECK(f.sync_counting_probes(&report) == 0);
    CHECK(!report.warnings.empty());
}
