#include "daemon/state/pass_record.hpp"

#include "core/sync/errors.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <doctest/doctest.h>

using namespace mirror;
using daemon::pass_outcome;
using daemon::pass_record;

namespace {

sync::ref_state ref(std::string name, bool in_sync) {
    return sync::ref_state{name, "v2", std::string(in_sync ? "v2" : "v1"), in_sync ? 0u : 1u};
}

sync::sync_report report_with(std::vector<sync::ref_state> refs, std::vector<sync::held_version> held = {}) {
    sync::sync_report report;
    report.refs = std::move(refs);
    report.held = std::move(held);
    return report;
}

sync::held_version held(std::string id, sync::sync_errc why) {
    return {id, make_error(why, "versions/" + id + "/version.json: " + std::string(why == sync::sync_errc::sha256_mismatch ? "digest" : "size"))};
}

double lag_of(pass_record const& record, std::string const& name, double now) {
    for (auto const& [ref, lag] : daemon::ref_lags(record, now))
        if (ref == name)
            return lag;
    return -1.0;
}

} // namespace

TEST_CASE("a ref's lag counts from the first pass that found it behind, and clears when in sync") {
    pass_record record;
    daemon::record_pass(record, report_with({ref("refs/heads/main", false), ref("refs/tags/v1", true)}), pass_outcome::ok, 1000);
    CHECK(lag_of(record, "refs/heads/main", 1000) == 0);
    CHECK(lag_of(record, "refs/tags/v1", 1000) == 0);
    CHECK(record.refs[0].behind_since == 1000);
    CHECK_FALSE(record.refs[1].behind_since);
    daemon::record_pass(record, report_with({ref("refs/heads/main", false), ref("refs/tags/v1", true)}), pass_outcome::ok, 1600);
    CHECK(lag_of(record, "refs/heads/main", 1600) == 600);
    // A pass that stopped before the refs keeps counting from the same moment.
    sync::sync_report stopped;
    stopped.fatal = make_error(sync::sync_errc::mirror_not_usable, "mirror: no");
    daemon::record_pass(record, stopped, pass_outcome::failed, 1900);
    CHECK(lag_of(record, "refs/heads/main", 1900) == 900);
    CHECK(record.last_result == "failed");
    CHECK(record.last_error == "mirror: no");
    daemon::record_pass(record, report_with({ref("refs/heads/main", true)}), pass_outcome::ok, 2000);
    CHECK(lag_of(record, "refs/heads/main", 2000) == 0);
    CHECK(record.last_error.empty());
    CHECK(record.refs.size() == 1); // the tag is gone from the origin
    daemon::record_pass(record, report_with({ref("refs/heads/main", false)}), pass_outcome::ok, 2500);
    CHECK(lag_of(record, "refs/heads/main", 2500) == 0);
    CHECK(lag_of(record, "refs/heads/main", 2600) == 100); // grows between passes, as time does
}

TEST_CASE("a held version stays held since its first hold, whatever its reason becomes") {
    pass_record record;
    daemon::record_pass(record, report_with({ref("refs/heads/main", false)}, {held("v3", sync::sync_errc::size_mismatch)}),
                        pass_outcome::held, 100);
    REQUIRE(record.held.size() == 1);
    CHECK(record.held[0].reason == "size_mismatch");
    CHECK(record.held[0].since == 100);
    daemon::record_pass(record,
                        report_with({ref("refs/heads/main", false)},
                                    {held("v3", sync::sync_errc::sha256_mismatch), held("v4", sync::sync_errc::ancestor_held)}),
                        pass_outcome::held, 700);
    REQUIRE(record.held.size() == 2);
    CHECK(record.held[0].reason == "sha256_mismatch");
    CHECK(record.held[0].since == 100);
    CHECK(record.held[0].message == "versions/v3/version.json: digest");
    CHECK(record.held[1].since == 700);
    // Published at last: no longer held, and held again later counts anew.
    daemon::record_pass(record, report_with({ref("refs/heads/main", true)}), pass_outcome::ok, 800);
    CHECK(record.held.empty());
    daemon::record_pass(record, report_with({ref("refs/heads/main", false)}, {held("v3", sync::sync_errc::size_mismatch)}),
                        pass_outcome::held, 900);
    CHECK(record.held[0].since == 900);
}

TEST_CASE("the record survives its JSON, and damaged JSON is refused with the member named") {
    pass_record record;
    daemon::record_pass(record, report_with({ref("refs/heads/main", false), sync::ref_state{"refs/tags/new", "v9", std::nullopt, 3}},
                                            {held("v3", sync::sync_errc::size_mismatch)}),
                        pass_outcome::held, 1234.5);
    record.next_pass = 1534.5;
    record.audits.last_full_recheck = 1200;
    record.audits.last_origin_check = 1250;
    record.audits.next_origin_check = 88000;
    record.audits.scrub = {"main/t/ducklake-1.parquet", 1100, 4096, 900.5};
    record.audits.next_scrub = 4700;
    record.audits.scrub_findings = {"mirror: data/main/t/ducklake-0.parquet: sha256 is …"};
    record.violations = {{"tag_moved", "refs/tags/v1: moved", "refs/tags/v1", "", 1100.25},
                         {"version_rewritten", "versions/v3/version.json: changed", "", "v3", 1200.5}};
    std::string why;
    auto back = daemon::pass_record_of(boost::json::parse(boost::json::serialize(daemon::to_json(record))), why);
    REQUIRE_MESSAGE(back, why);
    CHECK(*back == record);
    CHECK_FALSE(back->refs[1].mirror_target);

    auto damaged = [&](std::string text) {
        auto parsed = daemon::pass_record_of(boost::json::parse(text), why);
        CHECK_FALSE(parsed);
        return why;
    };
    std::string const good_start = R"({"last_result":"ok","last_error":"",)";
    CHECK(damaged("[]") == "not an object");
    CHECK(damaged(good_start + R"("refs":{},"held":[]})") == "refs: not a list");
    CHECK(damaged(good_start + R"("refs":[],"held":[{"version":"v","reason":"r","message":"m","since":"x"}]})") ==
          "held[0].since: not a number");
    CHECK(damaged(good_start + R"("refs":[{"name":"n","origin":"o","versions_behind":-1}],"held":[]})") ==
          "refs[0].versions_behind: not a number");
    CHECK(damaged(good_start + R"("refs":[7],"held":[]})") == "refs[0]: not an object");
    CHECK(damaged(R"({"last_result":1,"last_error":"","refs":[],"held":[]})") == "last_result: not a string");
    CHECK(damaged(good_start + R"("refs":[],"held":[],"scrub":{"after":"","round_started":0,"round_bytes":0,"findings":[1]}})") ==
          "scrub.findings: not a list of strings");
    CHECK(damaged(good_start + R"("refs":[],"held":[],"scrub":{"after":"","round_started":"x","round_bytes":0,"findings":[]}})") ==
          "scrub.round_started: not a number");
    // Written by a daemon before the audits: their defaults.
    auto older = daemon::pass_record_of(boost::json::parse(good_start + R"("refs":[],"held":[]})"), why);
    REQUIRE(older);
    CHECK(older->audits == daemon::audit_record{});
}

TEST_CASE("times read back from the state file are the times written, to the last bit") {
    // Boost.JSON 1.81's parser can be a unit in the last place off: a "held since" that
    // came back 1 µs early broke the equality the clock alerts and status rely on.
    int differing = 0;
    for (int i = 0; i < 2000; ++i) {
        pass_record record;
        double const now = daemon::record_time(1796187456.217643 + i * 0.000137);
        daemon::record_pass(record, report_with({ref("refs/heads/main", false)}, {held("v3", sync::sync_errc::size_mismatch)}),
                            pass_outcome::held, now);
        std::string why;
        auto back = daemon::pass_record_of(boost::json::parse(boost::json::serialize(daemon::to_json(record))), why);
        REQUIRE_MESSAGE(back, why);
        if (!(*back == record))
            ++differing;
    }
    CHECK(differing == 0);
}

TEST_CASE("a violation is known since the first pass that found it, quick passes add and a full recheck decides") {
    auto moved = make_error(sync::sync_errc::tag_moved, "refs/tags/v1: the origin's tag now names v2");
    auto rewritten = make_error(sync::sync_errc::version_rewritten, "versions/v3/version.json: the origin changed it");
    pass_record record;
    auto found = report_with({ref("refs/heads/main", true)});
    found.violations = {moved, rewritten};
    daemon::record_pass(record, found, pass_outcome::held, 100, true);
    REQUIRE(record.violations.size() == 2);
    CHECK(record.violations[0].kind == "tag_moved");
    CHECK(record.violations[0].ref == "refs/tags/v1");
    CHECK(record.violations[1].version == "v3");
    CHECK(record.violations[1].since == 100);

    // A quick pass re-examines no published version: it sees the tag only, and forgets nothing.
    auto quick = report_with({ref("refs/heads/main", true)});
    quick.violations = {moved};
    daemon::record_pass(record, quick, pass_outcome::held, 200, false);
    REQUIRE(record.violations.size() == 2);
    CHECK(record.violations[0].since == 100); // still the first sight

    // A pass that stopped before the refs saw nothing: nothing changes.
    daemon::record_pass(record, sync::sync_report{}, pass_outcome::failed, 250, true);
    CHECK(record.violations.size() == 2);

    // The next full recheck finds the file put back: only the tag stays, since its first sight.
    daemon::record_pass(record, quick, pass_outcome::held, 300, true);
    REQUIRE(record.violations.size() == 1);
    CHECK(record.violations[0].message == moved.message);
    CHECK(record.violations[0].since == 100);
    daemon::record_pass(record, report_with({ref("refs/heads/main", true)}), pass_outcome::ok, 400, true);
    CHECK(record.violations.empty());
}

TEST_CASE("the origin check's violations stand until a complete check no longer finds them, whatever the passes find") {
    auto resized = make_error(sync::sync_errc::data_file_changed_at_origin, "origin: data/t/a.parquet: resized");
    pass_record record;
    daemon::record_origin_check(record, {resized}, 100, true);
    REQUIRE(record.violations.size() == 1);
    CHECK(record.violations[0].found_by == "origin_check");
    daemon::record_pass(record, report_with({ref("refs/heads/main", true)}), pass_outcome::ok, 200, true);
    REQUIRE(record.violations.size() == 1); // a full recheck does not look at the data files
    daemon::record_origin_check(record, {}, 300, false); // stopped early: decides nothing
    CHECK(record.violations.size() == 1);
    daemon::record_origin_check(record, {}, 400, true);
    CHECK(record.violations.empty());
}
