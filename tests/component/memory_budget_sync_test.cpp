// The look-ahead of a pass draws on the process's memory budget: versions gathered ahead
// hold grants of what they keep in memory, wait while it is spent, and the next version to
// publish never waits (so the pass cannot block itself).

#include "core/io/memory_budget.hpp"
#include "core/store/s3_store.hpp"
#include "core/sync/sync_pass.hpp"

#include "tests/component/helpers.hpp"
#include "tests/support/run.hpp"
#include "tests/support/s3rver.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

using namespace mirror;
using namespace mirror::test;

namespace {

/// `versions` versions on main, each with `files` one-byte data files of its own: each
/// version keeps a files.json and a list of data files of well over 64 KiB in memory.
/// With `big_bytes`, each version has one more data file of that size.
std::vector<std::string> publish_wide(std::filesystem::path const& root, int versions, int files,
                                      std::size_t big_bytes = 0) {
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
        if (big_bytes > 0) {
            options.data_files.push_back("main/v" + std::to_string(v) + "/ducklake-big.parquet");
            origin.add_data_file(options.data_files.back(), std::string(big_bytes, static_cast<char>('a' + v)));
        }
        parent = origin.add_version(options);
        ids.push_back(*parent);
    }
    origin.set_branch("main", *parent);
    origin.set_head("main");
    origin.write_refs_json();
    return ids;
}

/// One pass between two folders with `memory` as the process's budget.
sync::sync_report sync_within(std::filesystem::path const& tmp, io::memory_budget& memory) {
    sync::sync_options options;
    options.memory = &memory;
    return sync_folders(tmp / "origin", tmp / "mirror", options);
}

} // namespace

TEST_CASE("versions gathered ahead hold grants of the memory budget, and a spent budget never stalls the pass") {
    temp_dir tmp;
    auto ids = publish_wide(tmp / "origin", 5, 700);
    // Room for one version's lists at a time: the others wait, or go on as the next to publish.
    io::memory_budget memory(200 * 1024);
    auto report = sync_within(tmp.path(), memory);
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
    io::memory_budget memory(1024); // less than any version holds
    auto report = sync_within(tmp.path(), memory);
    INFO(describe(report));
    CHECK(report.exit_code() == 0);
    CHECK(report.published == ids);
    CHECK(memory.in_use() == 0);
}

TEST_CASE("into S3 with a small budget, versions gathered ahead never starve the uploads of the version published") {
    // The look-ahead takes at most half the budget, and an upload buffer at most half:
    // without both, versions gathered ahead (whose grants come back only once the version
    // before them is published) could hold what that version's upload waits for.
    temp_dir tmp;
    auto ids = publish_wide(tmp / "origin", 3, 700, 600 * 1024);
    s3rver_server server{{.buckets = {"mirror"}}};
    event_loop loop; // outlives the S3 store, whose connections are bound to it
    io::memory_budget memory(1024 * 1024); // less than one 5 MiB part: it takes half
    store::s3_store_settings settings;
    settings.access.creds = {std::string(s3rver_server::access_key_id), std::string(s3rver_server::secret_access_key),
                             std::nullopt};
    settings.access.endpoint = server.endpoint();
    settings.access.path_style = true;
    settings.allow_plain_http = true;
    settings.part_bytes = settings.multipart_threshold = 5 * 1024 * 1024;
    settings.memory = &memory;
    auto mirror = store::s3_store::open("s3://mirror/m/", settings);
    REQUIRE(mirror.has_value());
    auto origin = open_folder(tmp / "origin", false);
    sync::sync_options options;
    options.memory = &memory;
    auto report = loop(sync::run_sync(*origin, **mirror, options, nullptr));
    INFO(describe(report));
    CHECK(report.exit_code() == 0);
    CHECK(report.published == ids);
    CHECK(memory.peak() <= memory.capacity());
    CHECK(memory.in_use() == 0);
}
