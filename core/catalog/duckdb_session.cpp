#include "core/catalog/duckdb_session.hpp"

#include "core/catalog/detail/duckdb_c.hpp"
#include "core/catalog/detail/query_watchdog.hpp"
#include "core/io/text.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <utility>

namespace mirror::catalog {

namespace {

/// A SQL string literal: DuckDB has no parameters in ATTACH or SET, and a path may hold a quote.
std::string sql_text(std::string_view text) {
    std::string out = "'";
    for (char c : text) {
        out += c;
        if (c == '\'')
            out += '\'';
    }
    return out + "'";
}

/// Opens a database with the settings every session shares, plus `extra`.
result<duckdb_database> open_database(char const* path, std::string const& name, std::string const& memory_limit,
                                      std::vector<std::pair<char const*, std::string>> extra) {
    duckdb_config config = nullptr;
    if (duckdb_create_config(&config) != DuckDBSuccess)
        return make_error(catalog_errc::cannot_open, name + ": DuckDB could not make a configuration");
    struct config_guard {
        duckdb_config& c;
        ~config_guard() { duckdb_destroy_config(&c); }
    } guard{config};
    std::vector<std::pair<char const*, std::string>> settings = {
        {"autoinstall_known_extensions", "false"},
        {"autoload_known_extensions", "false"},
        {"threads", "1"},
        {"memory_limit", memory_limit},
    };
    settings.insert(settings.end(), extra.begin(), extra.end());
    for (auto const& [key, value] : settings)
        if (duckdb_set_config(config, key, value.c_str()) != DuckDBSuccess)
            return make_error(catalog_errc::cannot_open, name + ": DuckDB refused the setting " + key);
    duckdb_database database = nullptr;
    char* failure = nullptr;
    if (duckdb_open_ext(path, &database, config, &failure) != DuckDBSuccess) {
        std::string why = failure != nullptr ? failure : "unknown reason";
        duckdb_free(failure);
        return make_error(catalog_errc::cannot_open,
                          name + ": not a DuckDB database (" + std::string(io::utf8_prefix(why, 200)) + ")");
    }
    return database;
}

/// Runs a statement whose result does not matter; false when it fails.
bool run(duckdb_connection connection, std::string const& sql) {
    duckdb_result raw{};
    bool ok = duckdb_query(connection, sql.c_str(), &raw) == DuckDBSuccess;
    duckdb_destroy_result(&raw);
    return ok;
}

/// Column types whose values the chunk reader prints as DuckDB does: booleans, integers
/// and text. Others (floating point, HUGEINT) go through DuckDB's own printing.
bool chunk_readable(int type) {
    return (type >= DUCKDB_TYPE_BOOLEAN && type <= DUCKDB_TYPE_UBIGINT) || type == DUCKDB_TYPE_VARCHAR;
}

template <class T>
std::string number_at(void const* data, idx_t row) {
    return std::to_string(static_cast<T const*>(data)[row]);
}

std::string text_at(int type, void const* data, idx_t row) {
    switch (type) {
    case DUCKDB_TYPE_BOOLEAN: return static_cast<bool const*>(data)[row] ? "true" : "false";
    case DUCKDB_TYPE_TINYINT: return number_at<std::int8_t>(data, row);
    case DUCKDB_TYPE_SMALLINT: return number_at<std::int16_t>(data, row);
    case DUCKDB_TYPE_INTEGER: return number_at<std::int32_t>(data, row);
    case DUCKDB_TYPE_BIGINT: return number_at<std::int64_t>(data, row);
    case DUCKDB_TYPE_UTINYINT: return number_at<std::uint8_t>(data, row);
    case DUCKDB_TYPE_USMALLINT: return number_at<std::uint16_t>(data, row);
    case DUCKDB_TYPE_UINTEGER: return number_at<std::uint32_t>(data, row);
    case DUCKDB_TYPE_UBIGINT: return number_at<std::uint64_t>(data, row);
    default: break; // VARCHAR: up to 12 bytes inline, else a pointer
    }
    auto const& s = static_cast<duckdb_string_t const*>(data)[row];
    std::uint32_t length = s.value.inlined.length;
    return {length <= 12 ? s.value.inlined.inlined : s.value.pointer.ptr, length};
}

/// Reads a result chunk by chunk: far cheaper than a value call per cell, and exact (a
/// value call stops at the first NUL byte).
/// Rows read before they are handed on: one of DuckDB's chunks.
constexpr std::size_t rows_per_batch = 2048;

/// Hands `batch` on, full or at the end, and empties it.
result<void> hand_on(table& batch, row_batches const& each) {
    if (batch.rows.empty())
        return {};
    auto handed = each(batch);
    batch.rows.clear();
    return handed;
}

/// Reads a result a chunk at a time, from the chunks' own vectors.
result<void> read_chunks(duckdb_result& raw, std::vector<int> const& types, table& batch, row_batches const& each) {
    while (duckdb_data_chunk chunk = duckdb_fetch_chunk(raw)) {
        struct chunk_guard {
            duckdb_data_chunk& c;
            ~chunk_guard() { duckdb_destroy_data_chunk(&c); }
        } guard{chunk};
        idx_t size = duckdb_data_chunk_get_size(chunk);
        std::vector<void const*> data(types.size());
        std::vector<std::uint64_t*> validity(types.size());
        for (std::size_t c = 0; c < types.size(); ++c) {
            duckdb_vector vector = duckdb_data_chunk_get_vector(chunk, c);
            data[c] = duckdb_vector_get_data(vector);
            validity[c] = duckdb_vector_get_validity(vector);
        }
        for (idx_t r = 0; r < size; ++r) {
            std::vector<std::optional<std::string>> row;
            row.reserve(types.size());
            for (std::size_t c = 0; c < types.size(); ++c) {
                if (validity[c] != nullptr && !duckdb_validity_row_is_valid(validity[c], r))
                    row.emplace_back();
                else
                    row.emplace_back(text_at(types[c], data[c], r));
            }
            batch.rows.push_back(std::move(row));
        }
        if (auto handed = hand_on(batch, each); !handed)
            return handed;
    }
    return {};
}

/// Reads a result a value at a time, printed by DuckDB.
result<void> read_values(duckdb_result& raw, std::size_t columns, table& batch, row_batches const& each) {
    idx_t rows = duckdb_row_count(&raw);
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
        batch.rows.push_back(std::move(row));
        if (batch.rows.size() == rows_per_batch)
            if (auto handed = hand_on(batch, each); !handed)
                return handed;
    }
    return hand_on(batch, each);
}

/// Runs `sql` into `raw`; past `deadline` a watchdog interrupts it (timed_out).
result<void> run_guarded(duckdb_connection connection, std::string const& sql, duckdb_result& raw,
                         std::optional<std::chrono::steady_clock::time_point> deadline, std::string const& name) {
    if (deadline && std::chrono::steady_clock::now() >= *deadline)
        return make_error(catalog_errc::timed_out, name + ": reading the catalog took too long");
    bool interrupted = false;
    duckdb_state state = DuckDBError;
    if (deadline) {
        // A hostile catalog must not hold a reader for ever: past the deadline the
        // process's watchdog interrupts the query, which then fails.
        detail::watched_query watched(connection, *deadline);
        state = duckdb_query(connection, sql.c_str(), &raw);
        interrupted = watched.interrupted();
    } else {
        state = duckdb_query(connection, sql.c_str(), &raw);
    }
    if (interrupted)
        return make_error(catalog_errc::timed_out, name + ": reading the catalog took too long (interrupted)");
    if (state != DuckDBSuccess) {
        char const* why = duckdb_result_error(&raw);
        return make_error(catalog_errc::query_failed,
                          name + ": " + std::string(io::utf8_prefix(why != nullptr ? why : "query failed", 300)));
    }
    return {};
}

} // namespace

std::size_t table::column(std::string_view name) const {
    for (std::size_t i = 0; i < columns.size(); ++i)
        if (columns[i] == name)
            return i;
    throw std::out_of_range("no column " + std::string(name));
}

struct duckdb_instance::handles {
    duckdb_database database = nullptr;
    ~handles() {
        if (database != nullptr)
            duckdb_close(&database);
    }
};

duckdb_instance::duckdb_instance(std::unique_ptr<handles> h, std::string memory_limit)
    : handles_(std::move(h)), memory_limit_(std::move(memory_limit)) {}
duckdb_instance::~duckdb_instance() = default;

result<std::unique_ptr<duckdb_instance>> duckdb_instance::open_unrestricted(std::string const& memory_limit) {
    auto h = std::make_unique<handles>();
    // No temporary folder yet (restrict_to sets it): nothing spills before then.
    auto database = open_database(nullptr, "catalog reader", memory_limit, {});
    if (!database)
        return database.error();
    h->database = *database;
    return std::unique_ptr<duckdb_instance>(new duckdb_instance(std::move(h), memory_limit));
}

result<void> duckdb_instance::restrict_to(std::filesystem::path const& folder) {
    std::string name = "catalog reader";
    // A directory needs its final slash, or "/tmp/x" would allow "/tmp/xy".
    std::string dir = std::filesystem::absolute(folder).lexically_normal().string();
    if (!dir.ends_with('/'))
        dir += '/';
    duckdb_connection connection = nullptr;
    if (duckdb_connect(handles_->database, &connection) != DuckDBSuccess)
        return make_error(catalog_errc::cannot_open, name + ": DuckDB could not connect");
    // An in-memory database would spill past its memory limit into ".tmp" in the working
    // directory: keep it in the folder. allowed_directories can only be set while external
    // access is on, and nothing can be changed once the configuration is locked.
    bool ok = run(connection, "SET temp_directory = " + sql_text(dir + ".duckdb-tmp")) &&
              run(connection, "SET allowed_directories = [" + sql_text(dir) + "]") &&
              run(connection, "SET enable_external_access = false") && run(connection, "SET lock_configuration = true");
    duckdb_disconnect(&connection);
    if (!ok) {
        usable_ = false;
        return make_error(catalog_errc::cannot_open, name + ": DuckDB refused to restrict file access to " + dir);
    }
    return {};
}

result<std::unique_ptr<duckdb_instance>> duckdb_instance::open(std::filesystem::path const& folder,
                                                               std::string const& memory_limit) {
    auto opened = open_unrestricted(memory_limit);
    if (!opened)
        return opened.error();
    if (auto restricted = (*opened)->restrict_to(folder); !restricted)
        return restricted.error();
    return opened;
}

struct duckdb_session::handles {
    duckdb_database database = nullptr; ///< owned: a session of open()
    duckdb_instance* instance = nullptr; ///< shared: a session of attach()
    std::string alias;                   ///< the attached catalog's name; empty when none
    duckdb_connection connection = nullptr;
    ~handles() {
        // A catalog that stays attached would be readable by the next one: an instance
        // that cannot detach is not used again.
        if (!alias.empty() && !run(connection, "DETACH " + alias))
            instance->usable_ = false;
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
    std::vector<std::pair<char const*, std::string>> extra = {
        {"access_mode", options.read_only ? "READ_ONLY" : "READ_WRITE"}};
    if (options.read_only)
        extra.emplace_back("enable_external_access", "false");
    auto h = std::make_unique<handles>();
    auto database = open_database(file.c_str(), name, options.memory_limit, std::move(extra));
    if (!database)
        return database.error();
    h->database = *database;
    if (duckdb_connect(h->database, &h->connection) != DuckDBSuccess)
        return make_error(catalog_errc::cannot_open, name + ": DuckDB could not connect");
    return std::unique_ptr<duckdb_session>(new duckdb_session(std::move(h), std::move(name), std::move(options)));
}

result<std::unique_ptr<duckdb_session>> duckdb_session::attach(duckdb_instance& instance,
                                                               std::filesystem::path const& file,
                                                               session_options options) {
    std::string name = options.name.empty() ? file.filename().string() : options.name;
    if (!instance.usable())
        return make_error(catalog_errc::cannot_open, name + ": the catalog reader could not detach a catalog");
    auto h = std::make_unique<handles>();
    h->instance = &instance;
    if (duckdb_connect(instance.handles_->database, &h->connection) != DuckDBSuccess)
        return make_error(catalog_errc::cannot_open, name + ": DuckDB could not connect");
    std::string alias = "fdl_catalog_" + std::to_string(++instance.attached_);
    std::string path = std::filesystem::absolute(file).lexically_normal().string();
    std::unique_ptr<duckdb_session> session(new duckdb_session(std::move(h), name, std::move(options)));
    // TYPE duckdb: a file of another kind (SQLite…) is refused, never handed to an extension.
    auto attached = session->execute("ATTACH " + sql_text(path) + " AS " + alias + " (READ_ONLY, TYPE duckdb)");
    if (!attached) {
        if (attached.error().code != catalog_errc::query_failed)
            return attached.error();
        std::string why = attached.error().message.substr(name.size() + 2);
        return make_error(catalog_errc::cannot_open,
                          name + ": not a DuckDB database (" + std::string(io::utf8_prefix(why, 200)) + ")");
    }
    // Never USE it: as the default database, its macros, views and types would come first in
    // name resolution, and could stand in for what the reader's own queries name.
    session->handles_->alias = alias;
    return session;
}

result<std::unique_ptr<duckdb_session>> duckdb_session::attach_none(duckdb_instance& instance) {
    auto h = std::make_unique<handles>();
    h->instance = &instance;
    if (duckdb_connect(instance.handles_->database, &h->connection) != DuckDBSuccess)
        return make_error(catalog_errc::cannot_open, "catalog reader: DuckDB could not connect");
    return std::unique_ptr<duckdb_session>(new duckdb_session(std::move(h), "catalog reader", {}));
}

std::string const& duckdb_session::database() const { return handles_->alias; }

result<void> duckdb_session::execute(std::string const& sql) {
    duckdb_result raw{};
    auto ran = run_guarded(handles_->connection, sql, raw, options_.deadline, name_);
    duckdb_destroy_result(&raw);
    return ran;
}

result<table> duckdb_session::query(std::string const& sql, std::size_t max_rows) {
    table out;
    auto read = query_each(sql, max_rows, [&](table& batch) -> result<void> {
        if (out.columns.empty())
            out.columns = batch.columns;
        std::move(batch.rows.begin(), batch.rows.end(), std::back_inserter(out.rows));
        return {};
    });
    if (!read)
        return read.error();
    return out;
}

namespace {

/// The column types of a result, or why the reader does not read them.
result<std::vector<int>> plain_types(duckdb_result& raw, std::string const& name, table& batch) {
    std::vector<int> types;
    idx_t columns = duckdb_column_count(&raw);
    for (idx_t c = 0; c < columns; ++c) {
        // Only plain types are read: DuckDB 1.5's value functions crash on some results
        // with a UUID or nested column, and a hostile catalog chooses its column types.
        auto type = static_cast<int>(duckdb_column_type(&raw, c));
        bool plain = (type >= DUCKDB_TYPE_BOOLEAN && type <= DUCKDB_TYPE_DOUBLE) || type == DUCKDB_TYPE_HUGEINT ||
                     type == DUCKDB_TYPE_VARCHAR;
        if (!plain)
            return make_error(catalog_errc::query_failed,
                              name + ": column '" + std::string(io::utf8_prefix(duckdb_column_name(&raw, c), 60)) +
                                  "' has a type this reader does not read (" + std::to_string(type) + ")");
        batch.columns.emplace_back(duckdb_column_name(&raw, c));
        types.push_back(type);
    }
    return types;
}

struct result_guard {
    duckdb_result& r;
    ~result_guard() { duckdb_destroy_result(&r); }
};

} // namespace

result<void> duckdb_session::query_each(std::string const& sql, std::size_t max_rows, row_batches const& each) {
    bool handed = false;
    row_batches counted = [&](table& b) {
        handed = true;
        return each(b);
    };
    auto read = query_streaming(sql, max_rows, counted);
    if (!read && read.error().code == catalog_errc::unavailable) // see query_streaming
        read = query_materialised(sql, max_rows, counted);
    if (read && !handed) {
        table none; // no rows: `each` still learns the columns
        none.columns = std::move(last_columns_);
        return each(none);
    }
    return read;
}

result<void> duckdb_session::query_streaming(std::string const& sql, std::size_t max_rows,
                                             row_batches const& each) {
    // Streamed: DuckDB hands the rows over a chunk at a time as it scans, so a table of
    // a million rows is never held whole, neither by DuckDB nor here.
    if (options_.deadline && std::chrono::steady_clock::now() >= *options_.deadline)
        return make_error(catalog_errc::timed_out, name_ + ": reading the catalog took too long");
    duckdb_prepared_statement statement = nullptr;
    struct statement_guard {
        duckdb_prepared_statement& s;
        ~statement_guard() { duckdb_destroy_prepare(&s); }
    } statement_kept{statement};
    // Several statements at once cannot be prepared: they run materialised, which also
    // says what is wrong with a statement that does not parse.
    if (duckdb_prepare(handles_->connection, sql.c_str(), &statement) != DuckDBSuccess)
        return make_error(catalog_errc::unavailable, name_ + ": a query that cannot be prepared");
    std::optional<detail::watched_query> watched; // past the deadline, the scan is interrupted
    if (options_.deadline)
        watched.emplace(handles_->connection, *options_.deadline);
    duckdb_result raw{};
    result_guard kept{raw};
    auto failed = [&](char const* fallback) -> error {
        if (watched && watched->interrupted())
            return make_error(catalog_errc::timed_out, name_ + ": reading the catalog took too long (interrupted)");
        char const* why = duckdb_result_error(&raw);
        return make_error(catalog_errc::query_failed,
                          name_ + ": " + std::string(io::utf8_prefix(why != nullptr ? why : fallback, 300)));
    };
    if (duckdb_execute_prepared_streaming(statement, &raw) != DuckDBSuccess)
        return failed("query failed");
    table batch;
    auto types = plain_types(raw, name_, batch);
    if (!types)
        return types.error();
    last_columns_ = batch.columns;
    if (!std::all_of(types->begin(), types->end(), chunk_readable))
        return make_error(catalog_errc::unavailable, name_ + ": a column only DuckDB prints");
    std::size_t rows = 0;
    auto read = read_chunks(raw, *types, batch, [&](table& b) -> result<void> {
        rows += b.rows.size();
        if (rows > max_rows)
            return make_error(catalog_errc::too_large,
                              name_ + ": more than " + std::to_string(max_rows) + " rows");
        return each(b);
    });
    if (!read)
        return read;
    if ((watched && watched->interrupted()) || duckdb_result_error(&raw) != nullptr)
        return failed("reading the result failed"); // the scan stopped short
    return {};
}

result<void> duckdb_session::query_materialised(std::string const& sql, std::size_t max_rows,
                                                row_batches const& each) {
    duckdb_result raw{};
    result_guard kept{raw};
    if (auto ran = run_guarded(handles_->connection, sql, raw, options_.deadline, name_); !ran)
        return ran.error();
    idx_t rows = duckdb_row_count(&raw);
    if (rows > max_rows)
        return make_error(catalog_errc::too_large,
                          name_ + ": " + std::to_string(rows) + " rows, more than " + std::to_string(max_rows));
    table batch;
    auto types = plain_types(raw, name_, batch);
    if (!types)
        return types.error();
    last_columns_ = batch.columns;
    batch.rows.reserve(std::min<std::size_t>(rows, rows_per_batch));
    return read_values(raw, batch.columns.size(), batch, each);
}

} // namespace mirror::catalog
