#pragma once
// DuckDB through its C API, hardened for files nobody vouches for: a database opened on
// one file, or a shared in-memory database in which catalogs are attached in turn.

#include "core/catalog/errors.hpp"
#include "verify/error.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <functional>
#include <type_traits>
#include <vector>

namespace mirror::catalog {

/// Rows of text: a query's result, every value as DuckDB prints it, NULL as nullopt.
struct table {
    std::vector<std::string> columns;
    std::vector<std::vector<std::optional<std::string>>> rows;
    /// The index of a column by name; throws std::out_of_range for a name not selected (a bug).
    std::size_t column(std::string_view name) const;
};

/// Takes the rows of a query a batch at a time (the batch is emptied after); an error
/// stops the query and is its result.
using row_batches = std::function<result<void>(table& batch)>;

struct session_options {
    bool read_only = true;
    std::string memory_limit = "256MB";
    /// A query still running at this instant is interrupted (catalog_errc::timed_out).
    std::optional<std::chrono::steady_clock::time_point> deadline;
    std::string name; ///< names the database in messages; the file's name when empty
};

/// An in-memory DuckDB database that catalogs are attached to, one after another: opening
/// a database costs more than reading a catalog (docs/benchmarks.md). Extension installing
/// and loading are off, one thread, `memory_limit`, and external access off except for
/// files below `folder` (DuckDB's allowed_directories), after which the configuration is
/// locked. Use from one thread at a time.
class duckdb_instance {
public:
    static result<std::unique_ptr<duckdb_instance>> open(std::filesystem::path const& folder,
                                                         std::string const& memory_limit);
    /// The database alone, before it knows its folder: nothing may be attached to it until
    /// restrict_to() has run (a sandboxed reader makes it while it waits for its first
    /// request, which names the folder).
    static result<std::unique_ptr<duckdb_instance>> open_unrestricted(std::string const& memory_limit);
    /// Allows files below `folder` only, turns external access off and locks the
    /// configuration; once, on a database of open_unrestricted().
    result<void> restrict_to(std::filesystem::path const& folder);
    ~duckdb_instance();
    duckdb_instance(duckdb_instance const&) = delete;
    duckdb_instance& operator=(duckdb_instance const&) = delete;

    std::string const& memory_limit() const { return memory_limit_; }
    /// False once a catalog could not be detached: open another instance.
    bool usable() const { return usable_; }

private:
    friend class duckdb_session;
    struct handles;
    duckdb_instance(std::unique_ptr<handles> h, std::string memory_limit);
    std::unique_ptr<handles> handles_;
    std::string memory_limit_;
    std::uint64_t attached_ = 0; ///< names each attached catalog apart
    bool usable_ = true;
};

/// One connection to DuckDB: either to a database file it opened itself (open), or to a
/// shared instance with one catalog attached read-only (attach). Queries run with the
/// watchdog of `deadline` and read only plain column types.
class duckdb_session {
public:
    /// Opens `file` with extension installing and loading off, external access off
    /// (read-only sessions), one thread and a memory limit. Open only private copies: even
    /// read-only, DuckDB replays a .wal beside the file.
    static result<std::unique_ptr<duckdb_session>> open(std::filesystem::path const& file, session_options options);
    /// Attaches `file` (below the instance's folder; a private copy, for the same reason)
    /// read-only to `instance` under a name of its own (database()). The catalog is never
    /// made the session's default database, so nothing it defines takes part in resolving
    /// an unqualified name: queries name its tables in full.
    /// Fails with cannot_open (not a DuckDB file, absent, outside the folder) or timed_out.
    /// The session detaches it when destroyed; it must not outlive `instance`.
    static result<std::unique_ptr<duckdb_session>> attach(duckdb_instance& instance, std::filesystem::path const& file,
                                                          session_options options);
    /// A connection to `instance` with no catalog attached: for DuckDB's own objects only.
    static result<std::unique_ptr<duckdb_session>> attach_none(duckdb_instance& instance);
    ~duckdb_session();
    duckdb_session(duckdb_session const&) = delete;
    duckdb_session& operator=(duckdb_session const&) = delete;

    /// The name the catalog is attached under ("fdl_catalog_<n>"); empty for open().
    std::string const& database() const;

    /// The instant past which queries are interrupted; none when nullopt.
    std::optional<std::chrono::steady_clock::time_point> deadline() const { return options_.deadline; }
    void set_deadline(std::chrono::steady_clock::time_point deadline) { options_.deadline = deadline; }

    /// Runs one statement; fails with catalog_errc::query_failed (the message says why),
    /// too_large when it returns more than `max_rows` rows, or timed_out past the deadline.
    result<table> query(std::string const& sql, std::size_t max_rows = 1'000'000);
    /// The same, its rows handed to `each` a batch at a time (at most a few thousand rows),
    /// so that a large result is never held as text all at once; `each` is called once
    /// with no rows when there are none.
    result<void> query_each(std::string const& sql, std::size_t max_rows, row_batches const& each);

private:
    struct handles;
    duckdb_session(std::unique_ptr<handles> h, std::string name, session_options options);
    /// Runs a statement whose result does not matter (ATTACH).
    result<void> execute(std::string const& sql);
    /// query_each, streamed: unavailable when the text is not one statement, or a column
    /// is of a type only DuckDB prints.
    result<void> query_streaming(std::string const& sql, std::size_t max_rows, row_batches const& each);
    /// query_each, materialised, for columns only DuckDB prints (value by value).
    result<void> query_materialised(std::string const& sql, std::size_t max_rows, row_batches const& each);
    std::unique_ptr<handles> handles_;
    std::string name_;
    std::vector<std::string> last_columns_; ///< of the last query, for a result without rows
    session_options options_;
};

} // namespace mirror::catalog
