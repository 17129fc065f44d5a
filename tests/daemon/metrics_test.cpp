#include "daemon/metrics/metrics.hpp"
#include "daemon/state/pass_record.hpp"

#include "core/catalog/errors.hpp"
#include "core/io/errors.hpp"
#include "core/sync/errors.hpp"
#include "tests/support/local_servers.hpp"
#include "tests/support/temp_dir.hpp"
#include "verify/errors.hpp"

#include <doctest/doctest.h>

#include <chrono>

#include <cstdio>
#include <fstream>
#include <memory>

using namespace mirror;
using daemon::finished_pass;
using daemon::pass_outcome;

namespace {

bool has_line(std::string const& text, std::string const& line) {
    return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

sync::sync_report troubled_report() {
    sync::sync_report r;
    r.held.push_back({"v2", make_error(sync::sync_errc::sha256_mismatch, "versions/v2/ducklake.duckdb: sha256")});
    r.held.push_back({"v3", make_error(sync::sync_errc::ancestor_held, "versions/v3: its parent is held")});
    r.held.push_back({"v4", make_error(verify::verify_errc::missing_signature, "versions/v4: no signature")});
    r.held.push_back({"v5", make_error(verify::verify_errc::untrusted_key, "versions/v5: untrusted")});
    r.violations.push_back(make_error(sync::sync_errc::tag_moved, "refs/tags/v1: moved"));
    r.allowed_signers_skipped = 2;
    r.unverified.push_back({"v0", make_error(verify::verify_errc::missing_signature, "versions/v0: no signature")});
    r.published_with_problems.push_back(
        {"v1", make_error(catalog::catalog_errc::index_disagrees, "versions/v1/files.json disagrees")});
    r.signers["v1"] = verify::signer_info{};
    r.announced_keys.announced_not_trusted = {"SHA256:abc"};
    r.refs.push_back({"refs/heads/main", "v5", std::string("v1"), 4});
    r.refs.push_back({"refs/tags/v1", "v1", std::string("v1"), 0});
    r.files_copied = 3;
    r.bytes_copied = 1000;
    r.pending_files = 2;
    r.pending_bytes = 5000;
    return r;
}

/// What an HTTP store's client reports for a short session: answers, a retried 503, a
/// throttled one, a body cut short and a connection refused.
void some_traffic(io::request_observer& seen) {
    using io::request_failure;
    seen.observe({"GET", 200, request_failure::none});
    seen.observe({"GET", 200, request_failure::none});
    seen.observe({"GET", 304, request_failure::none});
    seen.observe({"HEAD", 404, request_failure::none});
    seen.observe({"GET", 503, request_failure::server_error});
    seen.observe({"GET", 429, request_failure::throttled});
    seen.observe({"GET", 200, request_failure::truncated});
    seen.observe({"GET", 0, request_failure::connect});
}

} // namespace

TEST_CASE("declared repositories get every watched series at 0, and build_info says what the build is") {
    daemon::metrics m({"0.1.0", "0.12.2", true, "3.0.17"});
    m.set_repositories({{"population", 60}, {"towns", 300}});
    auto text = m.text();
    CHECK(has_line(text, R"(fdl_mirror_build_info{duckdb="yes",libssh="0.12.2",openssl="3.0.17",version="0.1.0"} 1)"));
    CHECK(has_line(text, "fdl_mirror_repositories 2"));
    CHECK(has_line(text, R"(fdl_mirror_interval_seconds{repo="population"} 60)"));
    CHECK(has_line(text, R"(fdl_mirror_last_success_timestamp_seconds{repo="towns"} 0)"));
    CHECK(has_line(text, R"(fdl_mirror_failing_since_timestamp_seconds{repo="towns"} 0)"));
    CHECK(has_line(text, R"(fdl_mirror_passes_total{repo="towns",result="failed"} 0)"));
    CHECK(has_line(text, R"(fdl_mirror_signature_checks_total{repo="towns",result="invalid"} 0)"));
    CHECK(has_line(text, R"(fdl_mirror_immutability_violations_total{kind="tag_moved",repo="towns"} 0)"));
    CHECK(has_line(text, R"(fdl_mirror_integrity_failures_total{kind="sha256_mismatch",repo="towns"} 0)"));
    // Up or down is only what a pass saw: nothing before the first.
    CHECK(text.find(R"(fdl_mirror_origin_up{repo="towns"})") == std::string::npos);
    CHECK(text.find(R"(fdl_mirror_mirror_up{repo="towns"})") == std::string::npos);
    CHECK(has_line(text, R"(fdl_mirror_pending_files{repo="towns"} 0)"));
    CHECK(has_line(text, R"(fdl_mirror_pending_bytes{repo="population"} 0)"));
    // Request series appear on first use: their labels are open-ended (no rule watches them).
    CHECK(text.find("fdl_mirror_requests_total{") == std::string::npos);
    CHECK(text.find("fdl_mirror_request_errors_total{") == std::string::npos);
}

TEST_CASE("a pass's report becomes drift, held versions, signature checks, integrity failures and violations") {
    daemon::metrics m({"0.1.0", "0.12.2", false});
    m.set_repositories({{"population", 60}});
    m.pass_started("population", 1000);
    finished_pass pass{pass_outcome::held, 1042, 42, {{"refs/heads/main", 600}}};
    m.pass_finished("population", troubled_report(), pass);
    auto text = m.text();
    INFO(text);
    CHECK(has_line(text, R"(fdl_mirror_last_attempt_timestamp_seconds{repo="population"} 1000)"));
    CHECK(has_line(text, R"(fdl_mirror_last_success_timestamp_seconds{repo="population"} 1042)"));
    CHECK(has_line(text, R"(fdl_mirror_passes_total{repo="population",result="held"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_pass_duration_seconds_count{repo="population"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_ref_in_sync{ref="refs/heads/main",repo="population"} 0)"));
    CHECK(has_line(text, R"(fdl_mirror_ref_versions_behind{ref="refs/heads/main",repo="population"} 4)"));
    CHECK(has_line(text, R"(fdl_mirror_ref_lag_seconds{ref="refs/heads/main",repo="population"} 600)"));
    CHECK(has_line(text, R"(fdl_mirror_ref_in_sync{ref="refs/tags/v1",repo="population"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_ref_lag_seconds{ref="refs/tags/v1",repo="population"} 0)"));
    CHECK(has_line(text, R"(fdl_mirror_versions_held{reason="sha256_mismatch",repo="population"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_versions_held{reason="ancestor_held",repo="population"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_integrity_failures_total{kind="sha256_mismatch",repo="population"} 1)"));
    // ancestor_held is a consequence, not a failure of its own.
    CHECK(text.find(R"(fdl_mirror_integrity_failures_total{kind="ancestor_held")") == std::string::npos);
    CHECK(has_line(text, R"(fdl_mirror_signature_checks_total{repo="population",result="valid"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_signature_checks_total{repo="population",result="missing"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_signature_checks_total{repo="population",result="untrusted"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_immutability_violations_total{kind="tag_moved",repo="population"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_version_problems_total{kind="catalog.index_disagrees",repo="population"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_versions_unverified{repo="population"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_allowed_signers_problems{repo="population"} 2)"));
    CHECK(has_line(text, R"(fdl_mirror_untrusted_announced_keys{repo="population"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_copied_bytes_total{repo="population"} 1000)"));
    CHECK(has_line(text, R"(fdl_mirror_copied_files_total{repo="population"} 3)"));
    CHECK(has_line(text, R"(fdl_mirror_pending_files{repo="population"} 2)"));
    CHECK(has_line(text, R"(fdl_mirror_pending_bytes{repo="population"} 5000)"));

    // The next pass finds everything in sync: held reasons drop to 0, counters stay.
    sync::sync_report clean;
    clean.refs.push_back({"refs/heads/main", "v5", std::string("v5"), 0});
    m.pass_finished("population", clean, {pass_outcome::ok, 1100, 5, {}});
    text = m.text();
    CHECK(has_line(text, R"(fdl_mirror_versions_held{reason="sha256_mismatch",repo="population"} 0)"));
    CHECK(has_line(text, R"(fdl_mirror_ref_in_sync{ref="refs/heads/main",repo="population"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_ref_lag_seconds{ref="refs/heads/main",repo="population"} 0)"));
    CHECK(text.find(R"(ref="refs/tags/v1")") == std::string::npos); // gone from the origin's refs
    CHECK(has_line(text, R"(fdl_mirror_integrity_failures_total{kind="sha256_mismatch",repo="population"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_passes_total{repo="population",result="ok"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_pending_files{repo="population"} 0)"));
    CHECK(has_line(text, R"(fdl_mirror_pending_bytes{repo="population"} 0)"));
    CHECK(has_line(text, R"(fdl_mirror_versions_unverified{repo="population"} 0)"));

    // A failed pass moves no success time; it marks each side as it saw it, and only that.
    sync::sync_report unreachable;
    unreachable.origin_up = false;
    m.pass_finished("population", unreachable, {pass_outcome::failed, 1200, 1, {}});
    text = m.text();
    CHECK(has_line(text, R"(fdl_mirror_last_success_timestamp_seconds{repo="population"} 1100)"));
    CHECK(has_line(text, R"(fdl_mirror_origin_up{repo="population"} 0)"));
    CHECK(text.find(R"(fdl_mirror_mirror_up{repo="population"})") == std::string::npos);
    sync::sync_report mirror_down; // failed at the mirror: says nothing of the origin
    mirror_down.mirror_up = false;
    m.pass_finished("population", mirror_down, {pass_outcome::failed, 1250, 1, {}});
    text = m.text();
    CHECK(has_line(text, R"(fdl_mirror_origin_up{repo="population"} 0)"));
    CHECK(has_line(text, R"(fdl_mirror_mirror_up{repo="population"} 0)"));

    // It stopped before the refs and knew nothing pending: the last values stay.
    m.pass_finished("population", troubled_report(), {pass_outcome::held, 1300, 1, {}});
    sync::sync_report stopped;
    stopped.fatal = make_error(io::store_errc::transient, "fdl.json: timed out");
    m.pass_finished("population", stopped, {pass_outcome::failed, 1400, 1, {}});
    text = m.text();
    CHECK(has_line(text, R"(fdl_mirror_pending_files{repo="population"} 2)"));
    CHECK(has_line(text, R"(fdl_mirror_pending_bytes{repo="population"} 5000)"));
}

TEST_CASE("an origin with thousands of refs gets series for the most behind only, totals for all, and labels "
          "that cannot act on a terminal") {
    daemon::metrics m({"0.1.0", "0.12.2", false});
    m.set_repositories({{"many", 60}});
    sync::sync_report r;
    constexpr std::size_t count = 10'000;
    for (std::size_t i = 0; i < count; ++i) {
        std::string name = "refs/tags/t" + std::to_string(i);
        bool behind = i % 1000 == 7; // ten refs out of sync, each further behind than the last
        r.refs.push_back({name, "v2", std::string(behind ? "v1" : "v2"), behind ? i : 0});
    }
    r.refs.push_back({"refs/heads/\x1b[31mred\u202eevil", "v2", std::string("v1"), 1});
    m.pass_finished("many", r, {pass_outcome::ok, 1000, 1, {}});
    auto text = m.text();
    std::size_t in_sync_series = 0;
    for (std::size_t at = text.find("\nfdl_mirror_ref_in_sync{"); at != std::string::npos;
         at = text.find("\nfdl_mirror_ref_in_sync{", at + 1))
        ++in_sync_series;
    CHECK(in_sync_series == daemon::metrics::max_ref_series);
    CHECK(has_line(text, R"(fdl_mirror_refs{repo="many"} 10001)"));
    CHECK(has_line(text, R"(fdl_mirror_refs_out_of_sync{repo="many"} 11)"));
    // Every ref out of sync has its series, the furthest behind among them.
    CHECK(has_line(text, R"(fdl_mirror_ref_versions_behind{ref="refs/tags/t9007",repo="many"} 9007)"));
    CHECK(has_line(text, R"(fdl_mirror_ref_in_sync{ref="refs/tags/t7",repo="many"} 0)"));
    // The hostile name's escape and bidi characters are written out, never passed on.
    CHECK(text.find("\x1b") == std::string::npos);
    CHECK(text.find("\u202e") == std::string::npos);
    CHECK(text.find(R"(ref="refs/heads/\\x1b[31mred\\u{202e}evil")") != std::string::npos);
    CHECK(text.size() < 200'000); // about 12 MB a scrape before
}

TEST_CASE("request observers count answers by code and failures by kind, per repository and store") {
    daemon::metrics m({"0.1.0", "0.12.2", true});
    m.set_repositories({{"population", 60}, {"towns", 60}});
    auto origin = m.request_observer("population", "origin");
    auto mirror = m.request_observer("population", "mirror");
    auto again = m.request_observer("population", "origin"); // a store opened again counts into the same series
    some_traffic(*origin);
    again->observe({"GET", 200, io::request_failure::none});
    mirror->observe({"PUT", 200, io::request_failure::none});
    mirror->observe({"PUT", 0, io::request_failure::timeout});
    mirror->observe({"POST", 0, io::request_failure::reset});
    auto text = m.text();
    INFO(text);
    CHECK(has_line(text, R"(fdl_mirror_requests_total{code="200",method="GET",repo="population",store="origin"} 4)"));
    CHECK(has_line(text, R"(fdl_mirror_requests_total{code="304",method="GET",repo="population",store="origin"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_requests_total{code="404",method="HEAD",repo="population",store="origin"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_requests_total{code="503",method="GET",repo="population",store="origin"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_requests_total{code="429",method="GET",repo="population",store="origin"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_requests_total{code="200",method="PUT",repo="population",store="mirror"} 1)"));
    // No answer, no code: a failure before the head counts only as an error.
    CHECK(text.find(R"(code="0")") == std::string::npos);
    CHECK(has_line(text, R"(fdl_mirror_request_errors_total{kind="server_error",repo="population",store="origin"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_request_errors_total{kind="throttled",repo="population",store="origin"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_request_errors_total{kind="truncated",repo="population",store="origin"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_request_errors_total{kind="connect",repo="population",store="origin"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_request_errors_total{kind="timeout",repo="population",store="mirror"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_request_errors_total{kind="reset",repo="population",store="mirror"} 1)"));
    CHECK(text.find(R"(kind="")") == std::string::npos);
    CHECK(text.find(R"(repo="towns",store=)") == std::string::npos);
}

TEST_CASE("a removed repository loses its request series, and its observers count nothing after") {
    auto m = std::make_unique<daemon::metrics>(daemon::build_facts{"0.1.0", "0.12.2", true});
    m->set_repositories({{"population", 60}, {"towns", 60}});
    auto towns = m->request_observer("towns", "origin");
    auto population = m->request_observer("population", "mirror");
    some_traffic(*towns);
    some_traffic(*population);
    m->set_repositories({{"population", 60}});
    some_traffic(*towns); // a store of the removed repository still finishing a request
    auto text = m->text();
    CHECK(text.find(R"(repo="towns")") == std::string::npos);
    CHECK(has_line(text, R"(fdl_mirror_requests_total{code="200",method="GET",repo="population",store="mirror"} 3)"));

    // Declared again: new observers count from 0, the old one still counts nothing.
    m->set_repositories({{"population", 60}, {"towns", 60}});
    auto towns_again = m->request_observer("towns", "origin");
    towns_again->observe({"GET", 200, io::request_failure::none});
    towns->observe({"GET", 200, io::request_failure::none});
    text = m->text();
    CHECK(has_line(text, R"(fdl_mirror_requests_total{code="200",method="GET",repo="towns",store="origin"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_pending_files{repo="towns"} 0)"));

    // Observers may outlive the metrics (a store destroyed after them).
    m.reset();
    some_traffic(*population);
    towns_again->observe({"GET", 200, io::request_failure::none});
}

TEST_CASE("a reload keeps the counters of unchanged repositories and drops those removed") {
    daemon::metrics m({"0.1.0", "0.12.2", true});
    m.set_repositories({{"population", 60}, {"towns", 60}});
    m.pass_finished("population", troubled_report(), {pass_outcome::held, 10, 1, {}});
    m.pass_finished("towns", troubled_report(), {pass_outcome::held, 10, 1, {}});
    m.set_repositories({{"population", 120}});
    auto text = m.text();
    CHECK(has_line(text, "fdl_mirror_repositories 1"));
    CHECK(has_line(text, R"(fdl_mirror_interval_seconds{repo="population"} 120)"));
    CHECK(has_line(text, R"(fdl_mirror_passes_total{repo="population",result="held"} 1)"));
    CHECK(text.find(R"(repo="towns")") == std::string::npos);
}

TEST_CASE("the process's own series, as Prometheus clients name them, and the libraries in build_info") {
    daemon::metrics m({"0.1.0", "0.12.2", true, "3.0.17"});
    auto const before = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    auto text = m.text();
    CHECK(has_line(text, R"(fdl_mirror_build_info{duckdb="yes",libssh="0.12.2",openssl="3.0.17",version="0.1.0"} 1)"));
    auto value_of = [&](std::string const& name) {
        auto at = text.find("\n" + name + " ");
        REQUIRE_MESSAGE(at != std::string::npos, name);
        return std::stod(text.substr(at + name.size() + 2));
    };
    // This test's process started before this test, and not before the host did.
    double const started = value_of("process_start_time_seconds");
    CHECK(started <= before + 1);
    CHECK(started > before - 24 * 3600.0 * 365);
    CHECK(value_of("process_resident_memory_bytes") > 1024 * 1024);
    CHECK(value_of("process_virtual_memory_bytes") >= value_of("process_resident_memory_bytes"));
    CHECK(value_of("process_open_fds") >= 3); // at least stdin, stdout, stderr
    CHECK(value_of("process_max_fds") >= value_of("process_open_fds"));
    double const cpu = value_of("process_cpu_seconds_total");
    CHECK(cpu >= 0);
    // CPU time only grows: burn some, and see it counted at the next scrape.
    volatile double sink = 0;
    auto const until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
    while (std::chrono::steady_clock::now() < until)
        sink = sink + 1;
    text = m.text();
    CHECK(value_of("process_cpu_seconds_total") > cpu);
    CHECK(value_of("process_start_time_seconds") == doctest::Approx(started));
}

TEST_CASE("behind-since and held-since clocks come from the record, the oldest held versions first, and go with it") {
    daemon::metrics m({"0.1.0", "0.12.2", true});
    m.set_repositories({{"population", 60}});
    daemon::pass_record record;
    record.refs = {{"refs/heads/main", "v9", std::string("v8"), 1, 1000.0}, {"refs/tags/v1", "v1", std::string("v1"), 0, std::nullopt}};
    for (int i = 0; i < 25; ++i)
        record.held.push_back({"v" + std::to_string(100 + i), i == 0 ? "sha256_mismatch" : "ancestor_held", "m", 5000.0 - i});
    m.set_clocks("population", record);
    auto text = m.text();
    CHECK(has_line(text, R"(fdl_mirror_ref_behind_since_timestamp_seconds{ref="refs/heads/main",repo="population"} 1000)"));
    CHECK(has_line(text, R"(fdl_mirror_ref_behind_since_timestamp_seconds{ref="refs/tags/v1",repo="population"} 0)"));
    // 25 held, 20 series: the oldest (v124 at 4976 … v105 at 4995); v100 (5000) is left out.
    CHECK(has_line(text, R"(fdl_mirror_version_held_since_timestamp_seconds{reason="ancestor_held",repo="population",version="v124"} 4976)"));
    CHECK(has_line(text, R"(fdl_mirror_version_held_since_timestamp_seconds{reason="ancestor_held",repo="population",version="v105"} 4995)"));
    CHECK(text.find(R"(version="v104")") == std::string::npos);
    CHECK(text.find(R"(version="v100")") == std::string::npos);
    std::size_t series = 0;
    for (std::size_t at = text.find("\nfdl_mirror_version_held_since_timestamp_seconds{"); at != std::string::npos;
         at = text.find("\nfdl_mirror_version_held_since_timestamp_seconds{", at + 1))
        ++series;
    CHECK(series == daemon::metrics::max_held_series);

    // Published, and the tag gone: their series go.
    record.held.clear();
    record.refs.resize(1);
    m.set_clocks("population", record);
    text = m.text();
    CHECK(text.find("fdl_mirror_version_held_since_timestamp_seconds{") == std::string::npos);
    CHECK(text.find(R"(ref="refs/tags/v1")") == std::string::npos);
    m.set_repositories({});
    CHECK(m.text().find("fdl_mirror_ref_behind_since_timestamp_seconds{") == std::string::npos);
}

TEST_CASE("promtool check metrics accepts the exposition") {
    daemon::metrics m({"0.1.0", "0.12.2", true});
    m.set_repositories({{"population", 60}});
    m.pass_finished("population", troubled_report(), {pass_outcome::held, 1042, 42, {{"refs/heads/main", 6}}});
    some_traffic(*m.request_observer("population", "origin"));
    auto promtool = test::find_program("promtool", FDL_MIRROR_PROMTOOL);
    if (promtool.empty())
        promtool = test::find_program("promtool", FDL_MIRROR_PROMTOOL_SOURCE_TREE);
    REQUIRE_MESSAGE(!promtool.empty(), "promtool is not installed: run scripts/setup");
    test::temp_dir tmp;
    std::ofstream(tmp / "metrics.txt") << m.text();
    auto checked = test::run_shell(promtool.string() + " check metrics < " + (tmp / "metrics.txt").string() + " 2>&1");
    INFO(checked.out);
    CHECK(checked.exit_code == 0);
}

TEST_CASE("failing_since is when the failures in a row began, 0 once a pass completed") {
    daemon::metrics m({"0.1.0", "0.12.2", false});
    m.set_repositories({{"population", 60}});
    m.set_failing_since("population", 1000.5);
    CHECK(has_line(m.text(), R"(fdl_mirror_failing_since_timestamp_seconds{repo="population"} 1000.5)"));
    m.set_failing_since("population", std::nullopt);
    CHECK(has_line(m.text(), R"(fdl_mirror_failing_since_timestamp_seconds{repo="population"} 0)"));
    m.set_repositories({});
    CHECK(m.text().find("fdl_mirror_failing_since_timestamp_seconds{") == std::string::npos);
}

TEST_CASE("fdl_mirror_violations is the count of the violations known now, by kind, and drops when they go") {
    daemon::metrics m({"0.1.0", "0.12.2", true});
    m.set_repositories({{"population", 60}});
    CHECK(has_line(m.text(), R"(fdl_mirror_violations{kind="tag_moved",repo="population"} 0)"));
    daemon::pass_record record;
    record.violations = {{"tag_moved", "refs/tags/v1: moved", "refs/tags/v1", "", 10},
                         {"tag_moved", "refs/tags/v2: moved", "refs/tags/v2", "", 20},
                         {"refused_ref", "origin: refs/heads/a..b: contains '..'", "refs/heads/a..b", "", 20}};
    m.set_clocks("population", record);
    auto text = m.text();
    CHECK(has_line(text, R"(fdl_mirror_violations{kind="tag_moved",repo="population"} 2)"));
    CHECK(has_line(text, R"(fdl_mirror_violations{kind="refused_ref",repo="population"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_violations{kind="version_rewritten",repo="population"} 0)"));
    record.violations.clear();
    m.set_clocks("population", record);
    text = m.text();
    CHECK(has_line(text, R"(fdl_mirror_violations{kind="tag_moved",repo="population"} 0)"));
    CHECK(has_line(text, R"(fdl_mirror_violations{kind="refused_ref",repo="population"} 0)"));
    m.set_repositories({});
    CHECK(m.text().find("fdl_mirror_violations{") == std::string::npos); // forgotten with the repository
}

TEST_CASE("a daemon standing by exports no pass gauges of the repository: the holder does") {
    daemon::metrics m({"0.1.0", "0.12.2", true});
    m.set_repositories({{"population", 60}});
    sync::sync_report report = troubled_report();
    report.origin_up = true;
    report.mirror_up = true;
    m.pass_finished("population", report, {pass_outcome::held, 1042, 42, {{"refs/heads/main", 600}}});
    daemon::pass_record record;
    record.refs = {{"refs/heads/main", "v5", std::string("v1"), 4, 442.0}};
    record.violations = {{"tag_moved", "refs/tags/v1: moved", "refs/tags/v1", "", 10}};
    m.set_clocks("population", record);
    REQUIRE(has_line(m.text(), R"(fdl_mirror_ref_in_sync{ref="refs/heads/main",repo="population"} 0)"));
    REQUIRE(has_line(m.text(), R"(fdl_mirror_violations{kind="tag_moved",repo="population"} 1)"));

    m.standing_by("population");
    auto text = m.text();
    INFO(text);
    CHECK(text.find("fdl_mirror_ref_in_sync{") == std::string::npos);
    CHECK(text.find("fdl_mirror_ref_behind_since_timestamp_seconds{") == std::string::npos);
    CHECK(text.find("fdl_mirror_versions_held{") == std::string::npos);
    CHECK(text.find(R"(fdl_mirror_origin_up{repo="population"})") == std::string::npos);
    CHECK(text.find(R"(fdl_mirror_pending_files{repo="population"})") == std::string::npos);
    CHECK(has_line(text, R"(fdl_mirror_violations{kind="tag_moved",repo="population"} 0)"));
    // What is the daemon's own stays: its counters, its lease gauge.
    CHECK(has_line(text, R"(fdl_mirror_passes_total{repo="population",result="held"} 1)"));

    m.pass_finished("population", report, {pass_outcome::held, 1100, 42, {{"refs/heads/main", 600}}});
    CHECK(has_line(m.text(), R"(fdl_mirror_ref_in_sync{ref="refs/heads/main",repo="population"} 0)")); // back as holder
}
