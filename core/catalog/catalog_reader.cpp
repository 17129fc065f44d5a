#include "core/catalog/catalog_reader.hpp"

#include "core/catalog/duckdb_session.hpp"
#include "core/catalog/queries.hpp"
#include "core/fdl/paths.hpp"

#include <charconv>

namespace mirror::catalog {

bool is_known_format(std::string_view format) noexcept {
    for (std::string_view known : {"0.3", "0.4-dev1", "0.4", "1.0", "1.1-dev1", "1.1"})
        if (format == known)
            return true;
    return false;
}

static std::optional<std::uint64_t> count_of(std::optional<std::string> const& text) {
    if (!text)
        return std::nullopt;
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
    if (ec != std::errc() || end != text->data() + text->size())
        return std::nullopt;
    return value;
}

result<catalog_contents> read_catalog(std::filesystem::path const& private_copy, std::string const& name) {
    auto session = duckdb_session::open(private_copy, {});
    if (!session)
        return with_context(session.error(), name);
    auto fail = [&](catalog_errc code, std::string const& why) { return make_error(code, name + ": " + why); };

    catalog_contents out;
    auto settings = (*session)->query(std::string(queries::metadata), 100);
    if (!settings)
        return fail(catalog_errc::query_failed, "not a DuckLake catalog (" + settings.error().message + ")");
    for (auto const& row : settings->rows) {
        if (row[0] == "version" && row[1])
            out.format = *row[1];
        else if (row[0] == "data_path" && row[1])
            out.data_path = *row[1];
        else if (row[0] == "encrypted" && row[1] == "true")
            return fail(catalog_errc::bad_catalog, "encrypted catalogs are not read");
    }
    if (!is_known_format(out.format))
        return fail(catalog_errc::unknown_format, "DuckLake format '" + out.format.substr(0, 40) + "' is not known");

    auto snapshots = (*session)->query(std::string(queries::snapshots), 1);
    if (!snapshots)
        return with_context(snapshots.error(), name);
    auto last = snapshots->rows.empty() ? std::nullopt : count_of(snapshots->rows[0][0]);
    if (!last)
        return fail(catalog_errc::bad_catalog, "no snapshot");
    out.last_snapshot = *last;

    std::string sql(queries::live_files);
    for (auto at = sql.find("{SNAPSHOT}"); at != std::string::npos; at = sql.find("{SNAPSHOT}"))
        sql.replace(at, 10, std::to_string(out.last_snapshot));
    auto files = (*session)->query(sql);
    if (!files)
        return with_context(files.error(), name);
    auto kind = files->column("kind"), schema = files->column("schema_name"), table = files->column("table_name"),
         rows = files->column("row_count"), bytes = files->column("file_size_bytes"), path = files->column("rel_path"),
         full = files->column("full_path");
    for (auto const& row : files->rows) {
        std::string shown = row[full].value_or("?").substr(0, 200);
        if (!row[path])
            return fail(catalog_errc::bad_catalog, "'" + shown + "' lies outside data_dir");
        if (auto problem = fdl::relative_path_problem(*row[path]))
            return fail(catalog_errc::bad_catalog, "'" + shown + "': " + *problem);
        auto row_count = count_of(row[rows]);
        auto size = count_of(row[bytes]);
        if (!row_count || !size)
            return fail(catalog_errc::bad_catalog, "'" + shown + "': row count or size is not a non-negative integer");
        out.live_files.push_back({row[kind] == "delete", row[schema].value_or(""), row[table].value_or(""), *row_count,
                                  *size, *row[path]});
    }
    return out;
}

} // namespace mirror::catalog
