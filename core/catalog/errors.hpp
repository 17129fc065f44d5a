#pragma once
// Why a frozen catalog cannot be read, or breaks an FDL rule.

#include <boost/system/error_code.hpp>

#include <type_traits>

namespace mirror::catalog {

enum class catalog_errc {
    // The catalog cannot be read at all.
    cannot_open = 1,   ///< not a DuckDB file, or unreadable
    query_failed,      ///< a query the reader relies on failed: not a DuckLake catalog, or damaged
    unknown_format,    ///< a DuckLake format version this build does not read
    too_large,         ///< more rows than the reader accepts, or a catalog past the size limit
    timed_out,         ///< reading took longer than the deadline
    unavailable,       ///< this build has no catalog reader (built without DuckDB)
    // The catalog was read and breaks an FDL rule.
    bad_catalog,       ///< damaged bookkeeping: a file without its table, a negative size…
    outside_data_dir,  ///< a file resolves to an absolute path or one outside data_dir
    inlined_rows,      ///< rows held inside the catalog instead of in data files
    snapshot_mismatch, ///< the last snapshot, or a listed one, disagrees with version.json
    format_mismatch,   ///< the DuckLake format differs from version.json (or the file name)
    index_disagrees,   ///< files.json says otherwise than the catalog (the catalog wins)
    catalogs_disagree, ///< a catalogs/<format>.duckdb references other data files
    foreign_object,    ///< a view, macro, type… the DuckLake format does not define: not read at all
    absolute_path,     ///< a file named by an absolute path (or under an absolute table or schema
                       ///< path): readers of a mirror override data_path, never such a path
    over_memory_limit, ///< its contents would take more memory than the caller allows them
    // The sandboxed process that reads catalogs failed on this one (docs/design.md, "The
    // catalog sandbox"): what DuckDB does with hostile bytes, held apart from the daemon.
    reader_crashed, ///< the reader died (a signal, an unexpected exit) or answered garbage
    reader_limit,   ///< the reader went past its memory, CPU or time limit, and was stopped
};

boost::system::error_category const& catalog_category() noexcept;

inline boost::system::error_code make_error_code(catalog_errc e) noexcept {
    return {static_cast<int>(e), catalog_category()};
}

/// A short stable name for reports and metrics ("outside_data_dir").
char const* kind_name(catalog_errc e) noexcept;

} // namespace mirror::catalog

template <>
struct boost::system::is_error_code_enum<mirror::catalog::catalog_errc> : std::true_type {};
