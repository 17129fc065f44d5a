#pragma once
// One DuckDB database opened through its C API, hardened for files nobody vouches for.

#include "core/catalog/errors.hpp"
#include "verify/error.hpp"

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
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

struct session_options {
    bool read_only = true;
    std::string memory_limit = "256MB";
    /// A query still running at this instant is interrupted (catalog_errc::timed_out).
    std::optional<std::chrono::steady_clock::time_point> deadline;
    std::string name; ///< names the database in messages; the file's name when empty
};

/// A DuckDB database file opened with extension installing and loading off, external access
/// off (read-only sessions), one thread and a memory limit. Open only private copies: even
/// read-only, DuckDB replays a .wal beside the file.
class duckdb_session {
public:
    static result<std::unique_ptr<duckdb_session>> open(std::filesystem::path const& file, session_options options);
    ~duckdb_session();
    duckdb_session(duckdb_session const&) = delete;
    duckdb_session& operator=(duckdb_session const&) = delete;

    /// Runs one statement; fails with catalog_errc::query_failed (the message says why),
    /// too_large when it returns more than `max_rows` rows, or timed_out past the deadline.
    result<table> query(std::string const& sql, std::size_t max_rows = 1'000'000);

private:
    struct handles;
    duckdb_session(std::unique_ptr<handles> h, std::string name, session_options options);
    std::unique_ptr<handles> handles_;
    std::string name_;
    session_options options_;
};

} // namespace mirror::catalog

