#pragma once
// One thread for the whole process that interrupts DuckDB queries past their deadline: a
// hostile catalog must not hold a reader for ever, and a thread per query would make the
// process's threads grow with the queries in flight.

#include "core/catalog/detail/duckdb_c.hpp"

#include <chrono>

namespace mirror::catalog::detail {

/// While it lives, `connection`'s query is interrupted (duckdb_interrupt) once `deadline`
/// passes, and interrupted() says so. Once it is destroyed, the watchdog never touches the
/// connection again.
class watched_query {
public:
    watched_query(duckdb_connection connection, std::chrono::steady_clock::time_point deadline);
    ~watched_query();
    watched_query(watched_query const&) = delete;
    watched_query& operator=(watched_query const&) = delete;

    bool interrupted() const;

private:
    duckdb_connection connection_;
    std::chrono::steady_clock::time_point deadline_;
    bool interrupted_ = false; ///< under the watchdog's mutex
    friend class query_watchdog;
};

} // namespace mirror::catalog::detail
