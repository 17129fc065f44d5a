#include "core/catalog/resolve.hpp"

namespace mirror::catalog {

bool lifetime::visible_at(std::uint64_t snapshot) const {
    if (!begin)
        return false;
    // Compared as unsigned only once known non-negative: a hostile catalog chooses the signs.
    if (*begin > 0 && static_cast<std::uint64_t>(*begin) > snapshot)
        return false;
    return !end || (*end > 0 && snapshot < static_cast<std::uint64_t>(*end));
}

resolved_path resolve_path(std::optional<std::string> const& data_path, path_level const& schema,
                           path_level const& table, std::string const& file, bool file_relative) {
    static std::string const none;
    std::string const& schema_path = schema.path ? *schema.path : none;
    std::string const& table_path = table.path ? *table.path : none;
    bool const table_relative = table.relative.value_or(true), schema_relative = schema.relative.value_or(true);
    resolved_path out;
    if (file_relative && table_relative && schema_relative) {
        out.relative.emplace().reserve(schema_path.size() + table_path.size() + file.size());
        out.relative->append(schema_path).append(table_path).append(file);
        out.full.reserve((data_path ? data_path->size() : 0) + out.relative->size());
        out.full.append(data_path ? *data_path : none).append(*out.relative);
        return out;
    }
    if (!file_relative)
        out.full = file;
    else if (!table_relative)
        out.full = table_path + file;
    else
        out.full = schema_path + table_path + file;
    if (!data_path || data_path->empty() || !out.full.starts_with(*data_path))
        return out;
    std::string rest = out.full.substr(data_path->size());
    // "s3://b/data" must not take in "s3://b/database/x": the prefix ends at a folder.
    if (!data_path->ends_with('/')) {
        if (!rest.starts_with('/'))
            return out;
        rest.erase(0, 1);
    }
    out.relative = std::move(rest);
    return out;
}

} // namespace mirror::catalog
