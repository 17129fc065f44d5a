// The look-ahead of a pass draws on the process's memory budget: versions gathered ahead
// hold grants of what they keep in memory, wait while it is spent, and the next version to
// publish never waits (so the pass cannot block itself).

#include "core/store/memory_budget.hpp"
#include "core/sync/sync_pass.hpp"

#include "tests/component/helpers.hpp"
#include "tests/support/run.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

using namespace mirror;
using namespace mirror::test;

namespace {

/// `versions` versions on main, each with `files` one-byte data files of its own: each
/// version keeps a files.json and a list of data files of well over 64 KiB in memory.
std::vector<std::string> publish_wide(std::filesystem::path const& root, int versions, int files) {
    publisher origin(root);
    std::vector<std::string> ids;
    std::optional<std::string> parent;
    for (int v = 0; v < versions; ++v) {
        version_options options;
        options.parent = parent;
        for (int i = 0; i < files; ++i) {
            options.data_files.push_back("main/v" + std::to_string(v) + "/ducklake-" + std::to_string(i) + ".parquet");
            origin.add_data_file(options.data_files.back(), "x");
        }
        parent = origin.add_version(options);
        ids.push_back(*parent);
    }
    origin.set_branch("main", *parent);
    origin.set_head("main");
    origin.write_refs_json();
    return ids;
}

} // namespace

TEST_CASE("versions gathered ahead hold grants of the memory budget, and a spent budget never stalls the pass") {
    temp_dir tmp;
    auto ids = publish_wide(tmp / "origin", 5, 700);
    // Room for one version's lists at a time: the others wait, or go on as the next to publish.
    store::memory_budget memory(200 * 1024);
    sync::sync_options options;
    options.memory = &memory;
    auto report = sync_folders(tmp / "origin", tmp / "mirror", options);
    INFO(describe(report));
    CHECK(report.exit_code() == 0);
    CHECK(report.published == ids);
    CHECK(memory.peak() > 64 * 1024);          // the versions' memory was counted
    CHECK(memory.peak() <= memory.capacity()); // never past the budget
    CHECK(memory.in_use() == 0);               // every grant came back
    CHECK(audit_folder(tmp / "mirror").exit_code() == 0);
}

TEST_CASE("a budget smaller than one version's lists still lets the pass publish every version") {
    temp_dir tmp;
    auto ids = publish_wide(tmp / "origin", 3, 700);
    store::memory_budget memory(1024); // less than any version holds
    sync::sync_options options;
    options.memory = &memory;
    auto report = sync_folders(tmp / "origin", tmp / "mirror", options);
    INFO(describe(report));
    CHECK(report.exit_code() == 0);
    CHECK(report.published == ids);
    CHECK(memory.in_use() == 0);
}
