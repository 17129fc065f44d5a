#include "daemon/service/pass_log.hpp"

#include "core/catalog/errors.hpp"
#include "core/sync/errors.hpp"
#include "verify/errors.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <set>
#include <string>

using namespace mirror;
using daemon::finished_pass;
using daemon::pass_outcome;

namespace {

/// What log_pass writes, through a real FILE.
std::string logged(sync::sync_report const& report, finished_pass const& pass, config::log_level level,
                   config::log_format format = config::log_format::plain, std::set<std::string> const& known = {}) {
    std::FILE* out = std::tmpfile();
    REQUIRE(out != nullptr);
    daemon::logger log(config::log_settings{format, level}, out, daemon::log_sink::journald);
    daemon::log_pass(log, "population", report, pass, known);
    std::fflush(out);
    std::rewind(out);
    std::string text;
    char buffer[4096];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, out)) > 0;)
        text.append(buffer, n);
    std::fclose(out);
    return text;
}

} // namespace

TEST_CASE("a pass that held a version logs the version, the violation and a warning summary") {
    sync::sync_report r;
    r.published = {"v1"};
    r.held.push_back({"v2", make_error(sync::sync_errc::sha256_mismatch, "versions/v2/ducklake.duckdb: sha256 is x")});
    r.violations.push_back(make_error(sync::sync_errc::tag_moved, "refs/tags/v1: moved at the origin (kept)"));
    r.refs.push_back({"refs/heads/main", "v2", std::string("v1"), 1});
    r.refs.push_back({"refs/tags/v1", "v1", std::string("v1"), 0});
    r.refs_updated.push_back({"refs/heads/main", std::nullopt, "v1"});
    r.files_copied = 4;
    r.bytes_copied = 3 * 1024 * 1024;
    r.pending_files = 2;
    r.pending_bytes = 2048;
    finished_pass pass;
    pass.outcome = pass_outcome::held;
    pass.duration_seconds = 1.25;
    auto text = logged(r, pass, config::log_level::info);
    CHECK(text == "<6>repo=population version=v1 published\n"
                  "<6>repo=population ref refs/heads/main created at v1\n"
                  "<4>repo=population version=v2 held: versions/v2/ducklake.duckdb: sha256 is x\n"
                  "<3>repo=population immutability violation: refs/tags/v1: moved at the origin (kept)\n"
                  "<4>repo=population pass held in 1.2 s: 1 version published, 4 files (3.0 MiB) copied, 1 version "
                  "held, 1 violation; 1 of 2 refs in sync; 2 data files (2.0 KiB) pending\n");
    // At level warning the routine lines go; what someone must act on stays.
    auto quiet = logged(r, pass, config::log_level::warning);
    CHECK(quiet.find("published\n") == std::string::npos);
    CHECK(quiet.find("version=v2 held") != std::string::npos);
    CHECK(quiet.find("pass held") != std::string::npos);
}

TEST_CASE("a failed or cut pass says why at error priority") {
    sync::sync_report r;
    r.fatal = make_error(sync::sync_errc::mirror_not_usable, "mirror: s3://m/ cannot list");
    finished_pass pass;
    pass.outcome = pass_outcome::failed;
    pass.duration_seconds = 0.04;
    CHECK(logged(r, pass, config::log_level::info) == "<3>repo=population pass failed in 0.0 s: mirror: s3://m/ cannot list\n");
    pass.outcome = pass_outcome::timeout;
    r.fatal->message = "pass cut: the pass passed its pass_timeout";
    CHECK(daemon::pass_summary(r, pass) == "pass timeout in 0.0 s: pass cut: the pass passed its pass_timeout");
}

TEST_CASE("an uneventful pass is one info line") {
    sync::sync_report r;
    r.refs.push_back({"refs/heads/main", "v1", std::string("v1"), 0});
    finished_pass pass;
    CHECK(logged(r, pass, config::log_level::info) ==
          "<6>repo=population pass ok in 0.0 s: 0 versions published, 0 files (0 B) copied; 1 of 1 ref in sync\n");
}

TEST_CASE("a version published with a problem and one no longer verified each have their line") {
    sync::sync_report r;
    r.published = {"v2"};
    r.published_with_problems.push_back(
        {"v2", make_error(catalog::catalog_errc::index_disagrees, "versions/v2/files.json: lists a file the catalog does not")});
    r.unverified.push_back({"v1", make_error(verify::verify_errc::missing_signature, "versions/v1: no signature")});
    r.refs.push_back({"refs/heads/main", "v2", std::string("v2"), 0});
    finished_pass pass;
    pass.outcome = pass_outcome::held;
    pass.duration_seconds = 0.5;
    auto text = logged(r, pass, config::log_level::info);
    CHECK(text == "<6>repo=population version=v2 published\n"
                  "<4>repo=population version=v2 published with a problem: versions/v2/files.json: lists a file the "
                  "catalog does not\n"
                  "<3>repo=population version=v1 in the mirror, but its signature is not accepted now: versions/v1: "
                  "no signature\n"
                  "<4>repo=population pass held in 0.5 s: 1 version published, 0 files (0 B) copied, 1 version in the "
                  "mirror not accepted by the policy, 1 problem of published versions; 1 of 1 ref in sync\n");
    // Both are for someone to act on: they stay at level warning.
    auto quiet = logged(r, pass, config::log_level::warning);
    CHECK(quiet.find("version=v2 published with a problem") != std::string::npos);
    CHECK(quiet.find("version=v1 in the mirror, but its signature is not accepted now") != std::string::npos);
}

TEST_CASE("the log's fields name the kind of a published version's problem and of an unverified one") {
    sync::sync_report r;
    r.published_with_problems.push_back(
        {"v2", make_error(catalog::catalog_errc::index_disagrees, "versions/v2/files.json: disagrees")});
    r.unverified.push_back({"v1", make_error(verify::verify_errc::missing_signature, "versions/v1: no signature")});
    auto text = logged(r, finished_pass{}, config::log_level::info, config::log_format::json);
    CHECK(text.find("\"error_kind\":\"catalog.index_disagrees\"") != std::string::npos);
    CHECK(text.find("\"error_kind\":\"verify.missing_signature\"") != std::string::npos);
}

TEST_CASE("a violation's log line names its ref or version, and is an error once per finding") {
    sync::sync_report r;
    r.violations.push_back(make_error(sync::sync_errc::tag_moved, "refs/tags/v1: the origin's tag now names v2"));
    r.violations.push_back(make_error(sync::sync_errc::version_rewritten,
                                      "versions/019a-v1/version.json: the origin changed it (the mirror keeps its copy)"));
    r.violations.push_back(make_error(sync::sync_errc::refused_ref, "origin: refs/heads/x..y: contains '..'"));
    auto text = logged(r, finished_pass{}, config::log_level::info, config::log_format::json);
    CHECK(text.find(R"("error_kind":"tag_moved","ref":"refs/tags/v1")") != std::string::npos);
    CHECK(text.find(R"("version":"019a-v1")") != std::string::npos);
    CHECK(text.find(R"("ref":"refs/heads/x..y")") != std::string::npos);

    // The next pass finds the tag still moved: no second error line for it.
    std::set<std::string> const known{r.violations[0].message};
    auto again = logged(r, finished_pass{}, config::log_level::info, config::log_format::plain, known);
    CHECK(again.find("immutability violation: refs/tags/v1") == std::string::npos);
    CHECK(again.find("immutability violation: versions/019a-v1/version.json") != std::string::npos);
    auto debug = logged(r, finished_pass{}, config::log_level::debug, config::log_format::plain, known);
    CHECK(debug.find("<7>repo=population immutability violation, still: refs/tags/v1") != std::string::npos);
}
