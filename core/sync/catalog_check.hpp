#pragma once
// The catalog gate: a version's frozen catalog, read from a private copy, decides which
// data files it needs, and is held to version.json, files.json and its catalogs in
// other formats (spec README: "the catalog is authoritative").

#include "core/catalog/catalog_reader.hpp"
#include "core/fdl/files_index.hpp"
#include "core/fdl/version_record.hpp"
#include "core/io/net.hpp"
#include "core/io/blocking_pool.hpp"
#include "core/store/store.hpp"
#include "core/sync/catalog_readers.hpp"
#include "core/sync/copy.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace mirror::sync {

struct catalog_settings {
    /// Where private copies are made (a fresh 0700 folder inside, removed after); the
    /// system's temporary folder when empty.
    std::filesystem::path scratch_parent;
    /// Catalogs larger than this are refused (catalog_errc::too_large) before any byte is read.
    std::uint64_t max_bytes = std::uint64_t{1} << 30;
    std::chrono::milliseconds time_limit{60'000}; ///< per catalog read
    std::string memory_limit = "256MB";           ///< DuckDB's, per catalog read
    /// The process's catalog readers (the daemon shares one among all passes); a pass or
    /// audit without makes its own, of one thread, in scratch_parent.
    std::shared_ptr<catalog_readers> readers;
};

/// A private folder for catalogs being checked, inside the folder of the catalog readers
/// that read them: made on first use, removed with everything in it on destruction. Only
/// this process writes it, and no .wal is ever copied into it, so DuckDB opens exactly the
/// bytes that were checked.
class scratch_space {
public:
    scratch_space(catalog_settings const& settings, io::blocking_pool* pool);
    ~scratch_space();
    scratch_space(scratch_space const&) = delete;
    scratch_space& operator=(scratch_space const&) = delete;

    /// The folder as a store (keys as in the repository); made on first call.
    result<store::store*> files();
    /// Where a key's copy lies on disk.
    std::filesystem::path path_of(std::string const& key) const;
    /// Deletes every copy under a folder key ("versions/<id>/").
    void forget(std::string const& folder);
    /// Whether copying into this folder failed (a full or broken local disk): no catalog
    /// can be checked here any more, so a pass stops rather than hold every version.
    bool failed() const { return failed_; }
    void note_failure() { failed_ = true; }
    /// Reads the copy of `key` (made through files()) as a catalog, on the catalog
    /// readers' threads, in turn with every other pass's reads.
    awaitable<result<catalog::catalog_contents>> read_catalog(std::string key, catalog::read_options options);

private:
    std::filesystem::path parent_;
    io::blocking_pool* pool_;
    std::shared_ptr<catalog_readers> readers_;
    std::filesystem::path root_;
    std::unique_ptr<store::store> store_;
    bool failed_ = false;
};

/// A catalog in another format: its path in the version folder ("catalogs/1.0.duckdb"),
/// and its size where a listing gave one (otherwise a stat asks).
struct other_catalog {
    std::string path;
    std::optional<std::uint64_t> bytes;
};

/// What the catalog gate found for one version.
struct catalog_verdict {
    catalog::catalog_contents contents; ///< the version's catalog (ducklake.duckdb)
    /// Every rule broken, by the catalog itself, against version.json, files.json and
    /// catalogs/*; empty when the version may be published.
    std::vector<error> problems;
    /// Keys copied into the scratch space and checked: publish them from there.
    std::set<std::string, std::less<>> checked_copies;
};

/// Copies `key` from `from` into `scratch` and reads it as a catalog. `expect` pins it
/// (size and digest from version.json); without a size, its stat decides, under
/// settings.max_bytes. Fails when the catalog cannot be read at all (its copy failed,
/// it is not a DuckLake catalog, too large, too slow, or its contents would take more
/// than `max_memory`, when not 0). A failure of the scratch folder itself is noted on
/// `scratch` (scratch_space::failed).
awaitable<result<catalog::catalog_contents>> fetch_catalog(store::store& from, std::string key, expectation expect,
                                                           std::vector<std::uint64_t> snapshots,
                                                           scratch_space& scratch, catalog_settings const& settings,
                                                           io::blocking_pool* pool, std::uint64_t max_memory = 0);

/// The whole gate for a live version in `folder` ("versions/<id>/") of `from`: its catalog
/// against the record, against `index` (files.json) when given, and every catalog in
/// `other_catalogs` (absent ones are skipped). Each catalog's contents may take
/// `max_memory` (0: no limit); past it, catalog_errc::over_memory_limit.
awaitable<result<catalog_verdict>> check_version_catalogs(store::store& from, std::string folder,
                                                          fdl::version_record const& record,
                                                          fdl::files_index const* index,
                                                          std::vector<other_catalog> other_catalogs,
                                                          scratch_space& scratch, catalog_settings const& settings,
                                                          io::blocking_pool* pool, std::uint64_t max_memory = 0);

/// The format a catalogs/ path declares: "catalogs/1.0.duckdb" -> "1.0"; nullopt otherwise.
std::optional<std::string> declared_format(std::string_view path);

/// One error for a list of problems: the first, saying how many more there are.
error first_of(std::vector<error> const& problems);

} // namespace mirror::sync
