#include "core/catalog/duckdb_session.hpp"

#include "core/catalog/detail/duckdb_c.hpp"

#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <stop_token>
#include <thread>

namespace mirror::catalog {

std::size_t table::column(std::string_view name) const {
    for (std::size_t i = 0; i < columns.size(); ++i)
        if (columns[i] == name)
            return i;
    throw std::out_of_range("no column " + std::string(name));
}

struct duckdb_session::handles {
    duckdb_database database = nullptr;
    duckdb_connection connection = nullptr;
    ~handles() {
        if (connection != nullptr)
            duckdb_disconnect(&connection);
        if (database != nullptr)
            duckdb_close(&database);
    }
};

duckdb_session::duckdb_session(std::unique_ptr<handles> h, std::string name, session_options options)
    : handles_(std::move(h)), name_(std::move(name)), options_(std::move(options)) {}
duckdb_session::~duckdb_session() = default;

result<std::unique_ptr<duckdb_session>> duckdb_session::open(std::filesystem::path const& file, session_options options) {
    std::string name = options.name.empty() ? file.filename().string() : options.name;
    duckdb_config config = nullptr;
    if (duckdb_create_config(&config) != DuckDBSuccess)
        return make_error(catalog_errc::cannot_open, name + ": DuckDB could not make a configuration");
    struct config_guard {
        duckdb_config& c;
        ~config_guard() { duckdb_destroy_config(&c); }
    } guard{config};
    std::vector<std::pair<char const*, std::string>> settings = {
        {"access_mode", options.read_only ? "READ_ONLY" : "READ_WRITE"},
        {"autoinstall_known_extensions", "false"},
        {"autoload_known_extensions", "false"},
        {"threads", "1"},
        {"memory_limit", options.memory_limit},
    };
    if (options.read_only)
        settings.emplace_back("enable_external_access", "false");
    for (auto const& [key, value] : settings)
        if (duckdb_set_config(config, key, value.c_str()) != DuckDBSuccess)
            return make_error(catalog_errc::cannot_open, name + ": DuckDB refused the setting " + key);
    auto h = std::make_unique<handles>();
    char* failure = nullptr;
    if (duckdb_open_ext(file.c_str(), &h->database, config, &failure) != DuckDBSuccess) {
        std::string why = failure != nullptr ? failure : "unknown reason";
        duckdb_free(failure);
        h->database = nullptr;
        return make_error(catalog_errc::cannot_open, name + ": not a DuckDB database (" + why.substr(0, 200) + ")");
    }
    if (duckdb_connect(h->database, &h->connection) != DuckDBSuccess)
        return make_error(catalog_errc::cannot_open, name + ": DuckDB could not connect");
    return std::unique_ptr<duckdb_session>(new duckdb_session(std::move(h), std::move(name), std::move(options)));
}

result<table> duckdb_session::query(std::string const& sql, std::size_t max_rows) {
    duckdb_result raw{};
    struct result_guard {
        duckdb_result& r;
        ~result_guard() { duckdb_destroy_result(&r); }
    } guard{raw};
    if (options_.deadline && std::chrono::steady_clock::now() >= *options_.deadline)
        return make_error(catalog_errc::timed_out, name_ + ": reading the catalog took too long");
    bool interrupted = false;
    duckdb_state state = DuckDBError;
    {
        // A hostile catalog must not hold a worker for ever: past the deadline a watchdog
        // interrupts the query, which then fails.
        std::optional<std::jthread> watchdog;
        if (options_.deadline)
            watchdog.emplace([this, &interrupted, deadline = *options_.deadline](std::stop_token stop) {
                std::mutex m;
                std::condition_variable_any wake;
                std::unique_lock lock(m);
                if (!wake.wait_until(lock, stop, deadline, [] { return false; }) && !stop.stop_requested()) {
                    interrupted = true;
                    duckdb_interrupt(handles_->connection);
                }
            });
        state = duckdb_query(handles_->connection, sql.c_str(), &raw);
    } // the watchdog is stopped and joined here
    if (interrupted)
        return make_error(catalog_errc::timed_out, name_ + ": reading the catalog took too long (interrupted)");
    if (state != DuckDBSuccess) {
        char const* why = duckdb_result_error(&raw);
        return make_error(catalog_errc::query_failed,
                          name_ + ": " + std::string(why != nullptr ? why : "query failed").substr(0, 300));
    }
    table out;
    idx_t columns = duckdb_column_count(&raw);
    idx_t rows = duckdb_row_count(&raw);
    if (rows > max_rows)
        return make_error(catalog_errc::too_large,
                          name_ + ": " + std::to_string(rows) + " rows, more than " + std::to_string(max_rows));
    for (idx_t c = 0; c < columns; ++c) {
        // Only plain types are read: DuckDB 1.5's value functions crash on some results
        // with a UUID or nested column, and a hostile catalog chooses its column types.
        auto type = static_cast<int>(duckdb_column_type(&raw, c));
        bool plain = (type >= DUCKDB_TYPE_BOOLEAN && type <= DUCKDB_TYPE_DOUBLE) || type == DUCKDB_TYPE_HUGEINT ||
                     type == DUCKDB_TYPE_VARCHAR;
        if (!plain)
            return make_error(catalog_errc::query_failed, name_ + ": column '" +
                                                              std::string(duckdb_column_name(&raw, c)).substr(0, 60) +
                                                              "' has a type this reader does not read (" +
                                                              std::to_string(type) + ")");
        out.columns.emplace_back(duckdb_column_name(&raw, c));
    }
    out.rows.reserve(rows);
    for (idx_t r = 0; r < rows; ++r) {
        std::vector<std::optional<std::string>> row;
        row.reserve(columns);
        for (idx_t c = 0; c < columns; ++c) {
            if (duckdb_value_is_null(&raw, c, r)) {
                row.emplace_back();
                continue;
            }
            char* text = duckdb_value_varchar(&raw, c, r);
            row.emplace_back(text != nullptr ? text : "");
            duckdb_free(text);
        }
        out.rows.push_back(std::move(row));
    }
    return out;
}

} // namespace mirror::catalog
