// Crash consistency: a pass stopped at any write leaves a mirror that readers can trust,
// and the next pass completes it. The system test tests/system/kill_test.sh does the same
// with a real SIGKILL of the binary.

#include "core/store/fault_store.hpp"

#include "tests/component/helpers.hpp"
#include "tests/support/run.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

using namespace mirror;
using namespace mirror::test;
namespace fs = std::filesystem;

namespace {

/// An origin whose next pass does everything at once: new versions on two branches,
/// a new tag, an expiry and a late signature of versions the mirror already has.
struct busy_origin {
    temp_dir tmp;
    publisher origin{tmp / "origin"};
    sample_repo sample = publish_sample(origin);

    /// Mirrors the current origin into `mirror`, then changes the origin.
    void prepare(fs::path const& mirror) {
        auto first = sync_folders(tmp / "origin", mirror);
        REQUIRE(first.exit_code() == 0);
        origin.expire(sample.main.front(), false);
        origin.expire(sample.main[1], true);
        origin.add_signature_placeholder(sample.main[2]);
        origin.add_data_file("main/t/new-1.parquet", std::string(4000, 'n'));
        origin.add_data_file("main/t/new-2.parquet", std::string(6000, 'm'));
        version_options a;
        a.parent = sample.main.back();
        a.data_files = {"main/t/new-1.parquet"};
        auto va = origin.add_version(a);
        version_options b;
        b.parent = va;
        b.data_files = {"main/t/new-1.parquet", "main/t/new-2.parquet"};
        auto vb = origin.add_version(b);
        version_options c;
        c.parent = sample.dev_tip;
        c.data_files = {"main/t/new-2.parquet"};
        auto vc = origin.add_version(c);
        origin.set_branch("main", vb);
        origin.set_branch("dev", vc);
        origin.set_tag("v2", va);
        origin.write_refs_json();
    }
};

} // namespace

TEST_CASE("a pass that fails at any write leaves a consistent mirror, and a rerun completes it") {
    std::uint64_t writes_in_full_pass = 0;
    for (std::uint64_t fail_at = 1;; ++fail_at) {
        CAPTURE(fail_at);
        busy_origin setup;
        fs::path mirror = setup.tmp / "mirror";
        setup.prepare(mirror);
        auto origin_store = open_folder(setup.tmp / "origin", false);
        auto mirror_store = open_folder(mirror, true);
        store::fault_store failing(*mirror_store, fail_at, store::fault_action::fail);
        auto stopped = sync_stores(*origin_store, failing);
        CHECK(reader_visible_problems(mirror).empty());
        if (!failing.tripped()) {
            // The pass finished before write number fail_at: every step has been tried.
            CHECK(stopped.exit_code() == 0);
            writes_in_full_pass = failing.writes();
            break;
        }
        CHECK(stopped.exit_code() == 3);
        auto rerun = sync_stores(*origin_store, *mirror_store);
        INFO(describe(rerun));
        CHECK(rerun.exit_code() == 0);
        CHECK(reader_visible_problems(mirror).empty());
        CHECK(ref_of(mirror, "refs/heads/main") == ref_of(setup.tmp / "origin", "refs/heads/main"));
        CHECK(ref_of(mirror, "refs/heads/dev") == ref_of(setup.tmp / "origin", "refs/heads/dev"));
        CHECK(ref_of(mirror, "refs/tags/v2") == ref_of(setup.tmp / "origin", "refs/tags/v2"));
        // Expiry and withdrawal interrupted at any step are finished by the rerun.
        auto expired = mirror / "versions" / setup.sample.main.front();
        auto withdrawn = mirror / "versions" / setup.sample.main[1];
        CHECK(fs::exists(expired / "expired.json"));
        CHECK(!fs::exists(expired / "ducklake.duckdb"));
        CHECK(!fs::exists(withdrawn / "files.json"));
        CHECK(read_file(withdrawn / "version.json") ==
              read_file(setup.origin.version_dir(setup.sample.main[1]) / "version.json"));
        CHECK(fs::exists(mirror / "versions" / setup.sample.main[2] / "version.json.sig"));
        CHECK(rerun.violations.empty());
        REQUIRE(fail_at < 200); // a bound, in case the pass never finishes
    }
    // New data, three versions of four files each, the expiry's mark and deletes, a
    // signature, three refs, refs.json: the loop above went through all of them.
    CHECK(writes_in_full_pass >= 20);
}
