#pragma once
// The catalog reader process: DuckDB reads hostile catalogs there, sandboxed, so that
// whatever a catalog does to DuckDB (a crash, a hang, memory without bound) stops that
// process and never the one that asked (docs/design.md, "The catalog sandbox").
//
// It is the program that asked, run again: sandboxed_reader (catalog_sandbox.hpp) starts
// /proc/self/exe with worker_flag, and every main() that may read catalogs calls
// serve_catalog_worker_if_asked() first, before anything else runs.

#include <optional>
#include <string_view>

namespace mirror::catalog {

/// The argument that makes a program a catalog reader.
inline constexpr std::string_view worker_flag = "--fdl-catalog-reader";

/// When argv[1] is worker_flag (followed by the parent's pid, the address space limit, the
/// CPU limit and DuckDB's memory limit), serves requests on descriptor 3 until the parent closes it, and returns
/// the exit status: 0 when the parent closed the socket, 70 when the sandbox could not be
/// entered, 65 on a malformed request. Otherwise nullopt, having done nothing.
std::optional<int> serve_catalog_worker_if_asked(int argc, char** argv);

} // namespace mirror::catalog
