#pragma once
// Reading a frozen DuckLake catalog: its format and snapshots, its tables and views, the
// data and delete files it needs, and the FDL rules it breaks. Declared in every build;
// a build without DuckDB answers catalog_errc::unavailable (reader_available() says so).

#include "core/fdl/files_index.hpp"
#include "verify/error.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mirror::catalog {

struct catalog_delete {
    std::string path; ///< relative to data_dir
    std::uint64_t rows = 0;
    std::uint64_t bytes = 0;
};

/// A data file live at the last snapshot, with the delete file that applies to it.
struct catalog_data_file {
    std::string path; ///< relative to data_dir
    std::uint64_t rows = 0;
    std::uint64_t bytes = 0;
    std::optional<std::uint64_t> footer_bytes;
    std::optional<catalog_delete> deletes;
};

struct catalog_table {
    std::string name; ///< "schema.table"
    bool renamed_columns = false;
    std::vector<catalog_data_file> files; ///< in the catalog's order (data_file_id)
};

struct catalog_view {
    std::string name; ///< "schema.view"
    std::string dialect;
    std::string sql;
};

struct catalog_contents {
    std::string format;    ///< ducklake_metadata 'version'
    std::string data_path; ///< as the writer stored it (readers override it)
    std::uint64_t last_snapshot = 0;
    std::vector<std::uint64_t> retained_snapshots;
    std::vector<catalog_table> tables; ///< live at last_snapshot, by name
    std::vector<catalog_view> views;   ///< live at last_snapshot, by name
    /// Every data and delete file live at the last snapshot or at a snapshot asked for,
    /// each once, in a stable order: what a mirror must copy.
    std::vector<fdl::needed_data_file> needed;
    /// The FDL rules the catalog breaks (outside_data_dir, inlined_rows, bad_catalog,
    /// snapshot_mismatch for a snapshot asked for that it does not retain); empty when none.
    std::vector<error> problems;

    /// What these contents take in memory once decoded from a reader's answer (each list
    /// and string at its size), to charge them to a budget before they are made.
    std::uint64_t memory_bytes() const;
    std::uint64_t data_file_count() const;
    std::uint64_t total_bytes() const; ///< of `needed`
    bool has_deletes() const;
    bool has_renamed_columns() const;
};

struct read_options {
    /// Snapshots whose live files are needed too (version.json's ducklake.snapshots).
    std::vector<std::uint64_t> snapshots;
    /// Reading stops with catalog_errc::timed_out after this long.
    std::chrono::milliseconds time_limit{60'000};
    std::string memory_limit = "256MB";
    /// Files (data and delete) per snapshot past which the catalog is refused as too_large.
    std::size_t max_files = 1'000'000;
    /// The most the contents may take in memory (catalog_contents::memory_bytes) in the
    /// process that asked; past it the catalog is refused as over_memory_limit, before an
    /// answer that large is made. 0: no limit.
    std::uint64_t max_memory = 0;
};

/// Whether this build can read catalogs (it was built with DuckDB's C library).
bool reader_available() noexcept;

/// The DuckLake formats this reader knows (spec/ducklake-catalog.md, section 2).
bool is_known_format(std::string_view format) noexcept;

/// Reads catalogs lying below one folder, one after another, in one DuckDB database: each
/// is attached read-only, read and detached, which costs a fraction of opening a database
/// per catalog. The database is made on the first read, and made anew after a read that
/// failed (so a hostile catalog cannot disturb the next one) or that asks for another
/// memory limit. Blocking, and not thread-safe: use it from one thread at a time, off the
/// I/O thread. Destroy it after every read has returned.
class catalog_reader {
public:
    /// Only files below `folder` can be read (DuckDB refuses any other path). Without one,
    /// set_folder() names it before the first read.
    explicit catalog_reader(std::filesystem::path folder = {});
    ~catalog_reader();
    catalog_reader(catalog_reader const&) = delete;
    catalog_reader& operator=(catalog_reader const&) = delete;

    /// Reads `private_copy` (below the folder; a copy no one else writes, with no .wal
    /// beside it), read-only. Fails, with `name` (the catalog's key) in the message, when it
    /// cannot be read at all: cannot_open (not DuckDB, absent, outside the folder),
    /// query_failed (not DuckLake), unknown_format, too_large, timed_out, unavailable.
    /// Rules the catalog breaks are in `problems`.
    result<catalog_contents> read(std::filesystem::path const& private_copy, std::string const& name,
                                  read_options const& options = {});

    /// Makes the database for `memory_limit` now, before the folder is known, so that the
    /// first read does not pay for it (a sandboxed reader does this while it waits for its
    /// first request). Reads still need set_folder(). Failures show at the first read.
    void prepare(std::string const& memory_limit);
    /// Names the folder of a reader made without one; once.
    void set_folder(std::filesystem::path folder);

    struct batch_item {
        std::filesystem::path file; ///< a private copy below the folder, as for read()
        std::string name;
        read_options options;
    };
    /// Reads several catalogs, each with the result read() would give it, for less: they
    /// are attached together and DuckDB's catalog functions list their objects once for
    /// all (the listing of functions alone costs more than the rest of a read). Each has
    /// its whole time limit for its rows. When an attach or a listing fails, or a catalog
    /// cannot be read, the catalogs not yet read are read one by one with read(), on a new
    /// database: as with read(), nothing is read after a failure on the same database.
    std::vector<result<catalog_contents>> read_batch(std::vector<batch_item> const& items);

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

/// Reads one catalog with a catalog_reader of its own folder: what catalog_reader::read
/// does, at the cost of a DuckDB database. Blocking: call it off the I/O thread.
result<catalog_contents> read_catalog(std::filesystem::path const& private_copy, std::string const& name,
                                      read_options const& options = {});

} // namespace mirror::catalog
