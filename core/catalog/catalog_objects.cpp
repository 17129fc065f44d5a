#include "core/catalog/catalog_objects.hpp"

#include <algorithm>

namespace mirror::catalog {

namespace {

/// The tables every reader of the catalog needs (spec/ducklake-catalog.md, section 3).
constexpr std::string_view required_tables[] = {"ducklake_metadata", "ducklake_snapshot", "ducklake_schema",
                                                 "ducklake_table",    "ducklake_data_file", "ducklake_delete_file",
                                                 "ducklake_column",   "ducklake_view"};

/// A name from the catalog, short enough for a message.
std::string shown(std::optional<std::string> const& text) {
    std::string s = text.value_or("?");
    return s.size() > 100 ? s.substr(0, 100) + "…" : s;
}

/// Runs one of DuckDB's catalog functions (`function`, in the system catalog, where the
/// attached catalog cannot reach) for the rows that belong to the attached catalog.
/// `columns` are selected in order; the database name is checked again on each row.
result<table> objects_of(duckdb_session& db, std::string const& function, std::string const& columns,
                         std::string const& filter = "") {
    // The alias is ours ("fdl_catalog_<n>"), never the catalog's, so it needs no escaping.
    std::string sql = "SELECT database_name, " + columns + " FROM system.main." + function +
                      "() WHERE database_name = '" + db.database() + "'" + filter;
    auto rows = db.query(sql, 100'000);
    if (!rows)
        return rows.error();
    std::erase_if(rows->rows, [&](auto const& row) { return row[0] != db.database(); });
    return rows;
}

class inventory {
public:
    inventory(duckdb_session& db, std::string const& name) : db_(db), name_(name) {}

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
        auto rows = objects_of(db_, "duckdb_schemas", "schema_name");
        if (!rows)
            return rows.error();
        for (auto const& row : rows->rows)
            if (row[1] != "main")
                foreign("schema " + shown(row[1]));
        return {};
    }

    result<void> tables() {
        auto rows = objects_of(db_, "duckdb_tables", "schema_name, table_name, sql");
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
        auto rows = objects_of(db_, "duckdb_columns", "schema_name, table_name, column_name",
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
        auto rows = objects_of(db_, "duckdb_views", "schema_name, view_name", " AND NOT internal");
        if (!rows)
            return rows.error();
        for (auto const& row : rows->rows) {
            foreign("view " + shown(row[1]) + "." + shown(row[2]));
            metadata_view_ = metadata_view_ || (row[1] == "main" && row[2] == "ducklake_metadata");
        }
        return {};
    }

    result<void> functions() {
        auto rows = objects_of(db_, "duckdb_functions", "schema_name, function_name, function_type", " AND NOT internal");
        if (!rows)
            return rows.error();
        for (auto const& row : rows->rows) {
            std::string kind = row[3] == "table_macro" ? "table macro" : shown(row[3]);
            foreign(kind + " " + shown(row[1]) + "." + shown(row[2]));
        }
        return {};
    }

    result<void> types() {
        auto rows = objects_of(db_, "duckdb_types", "schema_name, type_name", " AND NOT internal");
        if (!rows)
            return rows.error();
        for (auto const& row : rows->rows)
            foreign("type " + shown(row[1]) + "." + shown(row[2]));
        return {};
    }

    result<void> sequences() {
        auto rows = objects_of(db_, "duckdb_sequences", "schema_name, sequence_name");
        if (!rows)
            return rows.error();
        for (auto const& row : rows->rows)
            foreign("sequence " + shown(row[1]) + "." + shown(row[2]));
        return {};
    }

    result<void> indexes() {
        auto rows = objects_of(db_, "duckdb_indexes", "schema_name, index_name");
        if (!rows)
            return rows.error();
        for (auto const& row : rows->rows)
            foreign("index " + shown(row[1]) + "." + shown(row[2]));
        return {};
    }

    duckdb_session& db_;
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
    return inventory(db, name).check();
}

std::string qualified_table(duckdb_session const& db, std::string const& table) {
    return quoted_name(db.database()) + ".main." + quoted_name(table);
}

} // namespace mirror::catalog
