#include "core/catalog/catalog_objects.hpp"
#include "core/io/text.hpp"

#include <algorithm>
#include <map>
#include <optional>

namespace mirror::catalog {

namespace {

/// The tables every reader of the catalog needs (spec/ducklake-catalog.md, section 3).
constexpr std::string_view required_tables[] = {"ducklake_metadata", "ducklake_snapshot", "ducklake_schema",
                                                 "ducklake_table",    "ducklake_data_file", "ducklake_delete_file",
                                                 "ducklake_column",   "ducklake_view"};

/// A name from the catalog, short enough for a message.
std::string shown(std::optional<std::string> const& text) {
    std::string s = text.value_or("?");
    return s.size() > 100 ? std::string(io::utf8_prefix(s, 100)) + "…" : s;
}

/// The single quoted list of the attached catalogs' names (ours, "fdl_catalog_<n>", never
/// the catalog's, so they need no escaping).
std::string name_list(std::vector<std::string> const& databases) {
    std::string out;
    for (auto const& name : databases)
        out += (out.empty() ? "'" : ", '") + name + "'";
    return out;
}

/// Where an inventory gets the rows of DuckDB's catalog functions (in the system catalog,
/// where no attached catalog can reach) that belong to its catalog. Listing once for
/// several attached catalogs costs what listing for one does: duckdb_functions() builds a
/// row for each of DuckDB's thousands of functions before any filter applies.
class object_listings {
public:
    /// Lists for every catalog of `databases` at once, running the queries on `runner`.
    object_listings(duckdb_session& runner, std::vector<std::string> databases)
        : runner_(runner), databases_(std::move(databases)) {}

    /// The rows of `function` for `database`: its name, then `columns` in order.
    result<table> of(std::string const& database, std::string const& function, std::string const& columns,
                     std::string const& filter) {
        std::string key = function + "|" + columns + "|" + filter;
        auto listed = listed_.find(key);
        if (listed == listed_.end()) {
            std::string sql = "SELECT database_name, " + columns + " FROM system.main." + function +
                              "() WHERE database_name IN (" + name_list(databases_) + ")" + filter;
            auto rows = runner_.query(sql, max_rows);
            if (!rows) {
                failure_ = rows.error();
                return rows.error();
            }
            listed = listed_.emplace(key, std::move(*rows)).first;
        }
        table out;
        out.columns = listed->second.columns;
        // The database name is checked again on each row.
        for (auto const& row : listed->second.rows)
            if (row[0] == database)
                out.rows.push_back(row);
        return out;
    }

    /// The first listing that failed, if one did.
    std::optional<error> const& failure() const { return failure_; }

private:
    static constexpr std::size_t max_rows = 100'000;
    duckdb_session& runner_;
    std::vector<std::string> databases_;
    std::map<std::string, table> listed_; ///< by function, columns and filter
    std::optional<error> failure_;
};

class inventory {
public:
    inventory(object_listings& listings, std::string const& database, std::string const& name)
        : listings_(listings), database_(database), name_(name) {}

    result<std::vector<std::string>> check() {
        for (auto step : {&inventory::schemas, &inventory::tables, &inventory::columns, &inventory::views,
                          &inventory::functions, &inventory::types, &inventory::sequences, &inventory::indexes})
            if (auto ok = (this->*step)(); !ok)
                return ok.error();
        std::sort(tables_.begin(), tables_.end());
        // A DuckDB file with nothing of DuckLake is not a catalog at all; one that has
        // DuckLake's settings, even as a view, is a catalog with foreign objects.
        bool ducklake = std::binary_search(tables_.begin(), tables_.end(), "ducklake_metadata") || metadata_view_;
        if (!ducklake)
            return make_error(catalog_errc::query_failed,
                              name_ + ": not a DuckLake catalog (it has no table ducklake_metadata)");
        if (!foreign_.empty()) {
            std::string listed;
            for (std::size_t i = 0; i < foreign_.size() && i < 5; ++i)
                listed += (i == 0 ? "" : ", ") + foreign_[i];
            if (foreign_.size() > 5)
                listed += " (and " + std::to_string(foreign_.size() - 5) + " more)";
            return make_error(catalog_errc::foreign_object,
                              name_ + ": holds what the DuckLake format does not define, so it is not read: " +
                                  listed);
        }
        for (auto table : required_tables)
            if (!std::binary_search(tables_.begin(), tables_.end(), table))
                return make_error(catalog_errc::query_failed,
                                  name_ + ": not a DuckLake catalog (it has no table " + std::string(table) + ")");
        return std::move(tables_);
    }

private:
    void foreign(std::string what) { foreign_.push_back(std::move(what)); }

    result<void> schemas() {
        auto rows = listings_.of(database_, "duckdb_schemas", "schema_name", "");
        if (!rows)
            return rows.error();
        for (auto const& row : rows->rows)
            if (row[1] != "main")
                foreign("schema " + shown(row[1]));
        return {};
    }

    result<void> tables() {
        auto rows = listings_.of(database_, "duckdb_tables", "schema_name, table_name, sql", "");
        if (!rows)
            return rows.error();
        for (auto const& row : rows->rows) {
            std::string table = shown(row[1]) + "." + shown(row[2]);
            if (row[1] != "main")
                continue; // its schema is foreign already
            if (!row[2] || !row[2]->starts_with("ducklake_"))
                foreign("table " + table);
            else
                tables_.push_back(*row[2]);
            // DuckDB prints a generated column's expression as its default; its SQL tells them apart.
            if (row[3] && row[3]->find("GENERATED ALWAYS AS") != std::string::npos)
                generated_.push_back(*row[2]);
        }
        return {};
    }

    result<void> columns() {
        // A value computed as it is read could differ from one reader to the next; a default
        // is never read, but DuckLake declares none, and DuckDB prints both the same way.
        auto rows = listings_.of(database_, "duckdb_columns", "schema_name, table_name, column_name",
                               " AND column_default IS NOT NULL");
        if (!rows)
            return rows.error();
        for (auto const& row : rows->rows) {
            bool generated = std::find(generated_.begin(), generated_.end(), row[2]) != generated_.end();
            foreign((generated ? "generated column " : "column default ") + shown(row[1]) + "." + shown(row[2]) +
                    "." + shown(row[3]));
        }
        return {};
    }

    result<void> views() {
        auto rows = listings_.of(database_, "duckdb_views", "schema_name, view_name", " AND NOT internal");
        if (!rows)
            return rows.error();
        for (auto const& row : rows->rows) {
            foreign("view " + shown(row[1]) + "." + shown(row[2]));
            metadata_view_ = metadata_view_ || (row[1] == "main" && row[2] == "ducklake_metadata");
        }
        return {};
    }

    result<void> functions() {
        auto rows = listings_.of(database_, "duckdb_functions", "schema_name, function_name, function_type", " AND NOT internal");
        if (!rows)
            return rows.error();
        for (auto const& row : rows->rows) {
            std::string kind = row[3] == "table_macro" ? "table macro" : shown(row[3]);
            foreign(kind + " " + shown(row[1]) + "." + shown(row[2]));
        }
        return {};
    }

    result<void> types() {
        auto rows = listings_.of(database_, "duckdb_types", "schema_name, type_name", " AND NOT internal");
        if (!rows)
            return rows.error();
        for (auto const& row : rows->rows)
            foreign("type " + shown(row[1]) + "." + shown(row[2]));
        return {};
    }

    result<void> sequences() {
        auto rows = listings_.of(database_, "duckdb_sequences", "schema_name, sequence_name", "");
        if (!rows)
            return rows.error();
        for (auto const& row : rows->rows)
            foreign("sequence " + shown(row[1]) + "." + shown(row[2]));
        return {};
    }

    result<void> indexes() {
        auto rows = listings_.of(database_, "duckdb_indexes", "schema_name, index_name", "");
        if (!rows)
            return rows.error();
        for (auto const& row : rows->rows)
            foreign("index " + shown(row[1]) + "." + shown(row[2]));
        return {};
    }

    object_listings& listings_;
    std::string const& database_;
    std::string const& name_;
    std::vector<std::string> tables_;    ///< base tables of main named ducklake_*
    std::vector<std::string> generated_; ///< tables of main with a generated column
    std::vector<std::string> foreign_;   ///< "view main.x", in the order found
    bool metadata_view_ = false;         ///< main.ducklake_metadata is a view
};

/// An identifier in double quotes, a quote inside doubled.
std::string quoted_name(std::string_view name) {
    std::string out = "\"";
    for (char c : name) {
        out += c;
        if (c == '"')
            out += '"';
    }
    return out + "\"";
}

} // namespace

result<std::vector<std::string>> check_catalog_objects(duckdb_session& db, std::string const& name) {
    object_listings listings(db, {db.database()});
    return inventory(listings, db.database(), name).check();
}

result<std::vector<result<std::vector<std::string>>>> check_catalog_objects(std::vector<duckdb_session*> const& catalogs,
                                                                            std::vector<std::string> const& names,
                                                                            duckdb_session& runner) {
    std::vector<std::string> databases;
    for (auto const* db : catalogs)
        databases.push_back(db->database());
    object_listings listings(runner, databases);
    std::vector<result<std::vector<std::string>>> verdicts;
    for (std::size_t i = 0; i < catalogs.size(); ++i) {
        auto verdict = inventory(listings, databases[i], names[i]).check();
        // A listing that failed is no verdict on any of them: the caller lists each alone.
        if (listings.failure())
            return *listings.failure();
        verdicts.push_back(std::move(verdict));
    }
    return verdicts;
}

std::string qualified_table(duckdb_session const& db, std::string const& table) {
    return quoted_name(db.database()) + ".main." + quoted_name(table);
}

} // namespace mirror::catalog
