// A pass asked to stop (the daemon's SIGTERM) starts nothing new, keeps what it finished,
// leaves the mirror consistent, and the next pass completes the work.

#include "core/sync/errors.hpp"
#include "core/sync/sync_pass.hpp"

#include "tests/component/helpers.hpp"
#include "tests/support/run.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

using namespace mirror;
using namespace mirror::test;
namespace fs = std::filesystem;

TEST_CASE("a pass asked to stop ends early with 'stopped', consistent, and the next pass finishes") {
    temp_dir tmp;
    publisher origin{tmp / "origin"};
    auto sample = publish_sample(origin);
    fs::path mirror = tmp / "mirror";

    for (int allowed_checks : {0, 1, 3, 6}) {
        CAPTURE(allowed_checks);
        fs::remove_all(mirror);
        int checks = 0;
        sync::sync_options options;
        options.concurrency = 1;
        options.stop_requested = [&] { return ++checks > allowed_checks; };
        auto stopped = sync_folders(tmp / "origin", mirror, options);
        INFO(describe(stopped));
        REQUIRE(stopped.fatal);
        CHECK(stopped.fatal->code == sync::sync_errc::stopped);
        CHECK(stopped.exit_code() == 1);
        CHECK(stopped.held.empty()); // stopping is no version's fault
        CHECK(stopped.published.size() < sample.main.size() + 1);
        CHECK(reader_visible_problems(mirror).empty());
        if (allowed_checks == 0)
            CHECK(stopped.files_copied == 0);
        if (allowed_checks == 6) { // far enough for the first version: its tag moves to it
            REQUIRE(!stopped.published.empty());
            CHECK(stopped.published.front() == sample.main.front());
            CHECK(ref_of(mirror, "refs/tags/v1") == sample.main.front());
        }

        auto rest = sync_folders(tmp / "origin", mirror, {});
        INFO(describe(rest));
        CHECK(rest.exit_code() == 0);
        CHECK(stopped.published.size() + rest.published.size() == sample.main.size() + 1);
        CHECK(ref_of(mirror, "refs/heads/dev") == sample.dev_tip);
        CHECK(reader_visible_problems(mirror).empty());
    }
}
