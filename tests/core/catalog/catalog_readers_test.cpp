#include "core/sync/catalog_readers.hpp"
#include <doctest/doctest.h>

#include "core/catalog/errors.hpp"
#include "tests/support/ducklake_writer.hpp"
#include "tests/support/run.hpp"
#include "tests/support/temp_dir.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include <fcntl.h>
#include <fstream>
#include <optional>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace mirror;
using namespace mirror::test;
namespace fs = std::filesystem;

namespace {

/// A catalog of one table with one data file named after `n`, so that each read's result
/// shows whose catalog it is.
test::catalog_model numbered(int n) {
    test::catalog_model m;
    m.data_path = "/data/";
    m.snapshots = {0, 1};
    test::model_table t;
    t.name = "towns";
    t.columns = {{1, "id"}};
    t.files = {test::model_file{"file-" + std::to_string(n) + ".parquet", true, 1, 100 + std::uint64_t(n), 10, 1}};
    m.tables = {t};
    return m;
}

/// One read, its outcome kept in `out` (a coroutine of its own: a lambda's captures would
/// not outlive co_spawn).
awaitable<void> read_into(sync::catalog_readers& readers, fs::path file, std::string key,
                          std::optional<result<catalog::catalog_contents>>& out, int& finished) {
    catalog::read_options options; // named: GCC 12 frees a braced temporary in co_await twice
    auto read = co_await readers.read(file, key, options);
    out = std::move(read);
    ++finished;
}

} // namespace

TEST_CASE("reads waiting together are read in batches, each answered with its own catalog") {
    std::size_t threads = 1;
    SUBCASE("one reader") { threads = 1; }
    SUBCASE("two readers") { threads = 2; }
    temp_dir tmp;
    sync::catalog_readers readers(tmp.path(), threads);
    auto folder = readers.make_folder();
    REQUIRE(folder.has_value());
    constexpr int count = 20;
    constexpr int hostile = 7; // defines a macro: refused, and its neighbours are not
    for (int n = 0; n < count; ++n) {
        auto model = numbered(n);
        if (n == hostile)
            model.extra_sql = {"CREATE MACRO count(x) AS 0"};
        test::write_catalog(*folder / ("c" + std::to_string(n) + ".duckdb"), model);
    }
    event_loop loop;
    std::vector<std::optional<result<catalog::catalog_contents>>> outcomes(count);
    int finished = 0;
    // All asked at once, as the gatherers of several passes do.
    for (int n = 0; n < count; ++n)
        net::co_spawn(loop.io,
                      read_into(readers, *folder / ("c" + std::to_string(n) + ".duckdb"), "c" + std::to_string(n),
                                outcomes[n], finished),
                      net::detached);
    loop.io.run();
    REQUIRE(finished == count);
    for (int n = 0; n < count; ++n) {
        CAPTURE(n);
        auto const& r = *outcomes[n];
        if (n == hostile) {
            REQUIRE(!r.has_value());
            CHECK(r.error().code == catalog::catalog_errc::foreign_object);
            CHECK(r.error().message.find("c7: ") == 0);
            continue;
        }
        REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().message));
        REQUIRE(r->needed.size() == 1);
        CHECK(r->needed[0].path == "main/towns/file-" + std::to_string(n) + ".parquet");
        CHECK(r->needed[0].bytes == 100 + std::uint64_t(n));
    }
    auto counts = readers.read_counts();
    CHECK(counts.catalogs == count);
    // Each batch holds at most max_batch; the first reader starts before the rest are asked,
    // and the others take what waits: far fewer batches than catalogs.
    CHECK(counts.batches >= (count + sync::catalog_readers::max_batch - 1) / sync::catalog_readers::max_batch);
    CHECK(counts.batches <= count / 2);
}

TEST_CASE("the folders that crashed processes left are removed before a new one is made, and live ones are not") {
    temp_dir tmp;
    auto left = tmp / "fdl-mirror-catalogs-crashed";
    fs::create_directories(left / "pass-1" / "versions" / "x");
    std::ofstream(left / "pass-1" / "versions" / "x" / "ducklake.duckdb") << "a copy";
    std::ofstream(left / "owner.lock") << "";
    auto live = tmp / "fdl-mirror-catalogs-running";
    fs::create_directories(live);
    int held = ::open((live / "owner.lock").c_str(), O_RDWR | O_CREAT, 0600);
    REQUIRE(held >= 0);
    REQUIRE(::flock(held, LOCK_EX) == 0); // another process's, as far as a new one can tell
    auto unlocked_fresh = tmp / "fdl-mirror-catalogs-older-build";
    fs::create_directories(unlocked_fresh);
    auto someone_elses = tmp / "not-ours";
    fs::create_directories(someone_elses);
    {
        sync::catalog_readers readers(tmp.path(), 1);
        REQUIRE(readers.make_folder().has_value());
        CHECK(readers.stale_folders_removed() == 1);
        CHECK(!fs::exists(left));
        CHECK(fs::exists(live));
        CHECK(fs::exists(unlocked_fresh)); // no lock, and younger than a day: may be in use
        CHECK(fs::exists(someone_elses));
        // A second process finds the first one's folder locked, and leaves it.
        sync::catalog_readers second(tmp.path(), 1);
        REQUIRE(second.make_folder().has_value());
        CHECK(second.stale_folders_removed() == 0);
    }
    ::close(held);
    std::size_t ours = 0;
    for (auto const& entry : fs::directory_iterator(tmp.path()))
        ours += entry.path().filename().string().starts_with("fdl-mirror-catalogs-") ? 1 : 0;
    CHECK(ours == 2); // the live one and the older build's: both readers removed their own
}

TEST_CASE("readers' folders made at once by many processes in one parent are never taken for left over") {
    // A folder whose lock file was made but not yet locked looked left over to another
    // process making its own at that instant, which removed it: the first then failed
    // with "cannot make a private folder for catalog copies" (seen with two test
    // processes sharing /tmp). Children race here, as separate processes do.
    temp_dir tmp;
    constexpr int children = 4, rounds = 60;
    std::vector<pid_t> pids;
    for (int c = 0; c < children; ++c) {
        pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            int failures = 0;
            for (int r = 0; r < rounds; ++r) {
                sync::catalog_readers readers(tmp.path(), 1);
                auto first = readers.make_folder();
                auto second = readers.make_folder(); // the readers' folder is still there
                failures += (first && second && fs::is_directory(*first) && fs::is_directory(*second)) ? 0 : 1;
            }
            ::_exit(failures == 0 ? 0 : 1);
        }
        pids.push_back(pid);
    }
    int failed = 0;
    for (auto pid : pids) {
        int status = 0;
        ::waitpid(pid, &status, 0);
        failed += (WIFEXITED(status) && WEXITSTATUS(status) == 0) ? 0 : 1;
    }
    CHECK(failed == 0);
    for (auto const& entry : fs::directory_iterator(tmp.path()))
        CHECK_MESSAGE(false, "left behind: " << entry.path()); // each removed its own
}
