#pragma once
// One DuckDB database opened through its C API, hardened for files nobody vouches for.

#include "verify/error.hpp"

#include <boost/system/error_code.hpp>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace mirror::catalog {

enum class catalog_errc {
    cannot_open = 1, ///< not a DuckDB file, or unreadable
    query_failed,    ///< a query the reader relies on failed: not a DuckLake catalog, or damaged
    unknown_format,  ///< a DuckLake format version this build does not read
    bad_catalog,     ///< the catalog's content breaks an FDL rule (a path outside data_dir…)
    too_large,       ///< more rows than the reader accepts
};

boost::system::error_category const& catalog_category() noexcept;

inline boost::system::error_code make_error_code(catalog_errc e) noexcept {
    return {static_cast<int>(e), catalog_category()};
}

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

    /// Runs one statement; fails with catalog_errc::query_failed (the message says why) or
    /// too_large when it returns more than `max_rows` rows.
    result<table> query(std::string const& sql, std::size_t max_rows = 1'000'000);

private:
    struct handles;
    explicit duckdb_session(std::unique_ptr<handles> h, std::string name);
    std::unique_ptr<handles> handles_;
    std::string name_;
};

} // namespace mirror::catalog

template <>
struct boost::system::is_error_code_enum<mirror::catalog::catalog_errc> : std::true_type {};
