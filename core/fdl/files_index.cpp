#include "core/fdl/files_index.hpp"

#include "core/fdl/json_fields.hpp"
#include "core/fdl/paths.hpp"

#include <unordered_map>

namespace mirror::fdl {

static result<std::string> checked_path(object_fields const& fields) {
    auto path = fields.string("path");
    if (!path)
        return path.error();
    if (auto problem = relative_path_problem(*path))
        return fields.fail(fdl_errc::bad_path, "path", "'" + path->substr(0, 200) + "': " + *problem);
    return path;
}

static result<data_file_entry> read_file_entry(object_fields const& fields) {
    data_file_entry entry;
    auto path = checked_path(fields);
    if (!path)
        return path.error();
    entry.path = std::move(*path);
    field_reader read(fields);
    read.count("rows", entry.rows).count("bytes", entry.bytes).optional_count("footer_bytes", entry.footer_bytes);
    if (auto ok = read.done(); !ok)
        return ok.error();
    auto deletes = fields.optional_child("deletes");
    if (!deletes)
        return deletes.error();
    if (*deletes) {
        delete_file_entry del;
        auto del_path = checked_path(**deletes);
        if (!del_path)
            return del_path.error();
        del.path = std::move(*del_path);
        field_reader read_delete(**deletes);
        read_delete.count("rows", del.rows).count("bytes", del.bytes);
        if (auto ok = read_delete.done(); !ok)
            return ok.error();
        entry.deletes = std::move(del);
    }
    return entry;
}

result<files_index> parse_files_index(std::string_view text, std::string_view file, std::size_t max_tree_bytes) {
    auto json = parse_json(text, file, max_tree_bytes);
    if (!json)
        return json.error();
    auto top = object_fields::top(*json, file);
    if (!top)
        return top.error();
    auto tables = top->child("tables");
    if (!tables)
        return tables.error();

    files_index index;
    for (auto const& [name, value] : tables->object()) {
        auto table_fields = tables->optional_child(name);
        if (!table_fields)
            return table_fields.error();
        table_entry table;
        table.name = std::string(name);
        auto renamed = (*table_fields)->optional_bool("renamed_columns");
        if (!renamed)
            return renamed.error();
        table.renamed_columns = renamed->value_or(false);
        auto files = (*table_fields)->optional_array("files");
        if (!files)
            return files.error();
        std::size_t position = 0;
        for (auto const& f : **files) {
            std::string where = (*table_fields)->name_of("files") + "[" + std::to_string(position++) + "]";
            if (!f.is_object())
                return make_error(fdl_errc::wrong_type, std::string(file) + ": " + where + ": expected an object");
            auto entry = read_file_entry(object_fields(f.get_object(), file, where));
            if (!entry)
                return entry.error();
            table.files.push_back(std::move(*entry));
        }
        index.tables.push_back(std::move(table));
    }
    return index;
}

namespace {
/// A string's own bytes on the heap, past what fits inside it.
std::uint64_t heap_bytes(std::string const& s) { return s.capacity() > 15 ? s.capacity() + 1 : 0; }
} // namespace

std::uint64_t memory_bytes(files_index const& index) {
    std::uint64_t bytes = sizeof(index) + index.tables.capacity() * sizeof(table_entry);
    for (auto const& table : index.tables) {
        bytes += heap_bytes(table.name) + table.files.capacity() * sizeof(data_file_entry);
        for (auto const& f : table.files)
            bytes += heap_bytes(f.path) + (f.deletes ? heap_bytes(f.deletes->path) : 0);
    }
    return bytes;
}

std::uint64_t memory_bytes(std::vector<needed_data_file> const& files) {
    std::uint64_t bytes = files.capacity() * sizeof(needed_data_file);
    for (auto const& f : files)
        bytes += heap_bytes(f.path);
    return bytes;
}

result<std::vector<needed_data_file>> needed_files(files_index const& index, std::string_view file) {
    std::vector<needed_data_file> out;
    std::unordered_map<std::string, std::uint64_t> seen;
    auto add = [&](std::string const& path, std::uint64_t bytes) -> result<void> {
        auto [it, inserted] = seen.emplace(path, bytes);
        if (!inserted) {
            if (it->second != bytes)
                return make_error(fdl_errc::bad_value, std::string(file) + ": '" + path + "' is listed with " +
                                                           std::to_string(it->second) + " and " +
                                                           std::to_string(bytes) + " bytes");
            return {};
        }
        out.push_back({path, bytes});
        return {};
    };
    for (auto const& table : index.tables)
        for (auto const& f : table.files) {
            if (auto added = add(f.path, f.bytes); !added)
                return added.error();
            if (f.deletes)
                if (auto added = add(f.deletes->path, f.deletes->bytes); !added)
                    return added.error();
        }
    return out;
}

} // namespace mirror::fdl
