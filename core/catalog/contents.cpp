// What every build knows of catalogs, whether or not it can read them.

#include "core/catalog/catalog_reader.hpp"

namespace mirror::catalog {

bool is_known_format(std::string_view format) noexcept {
    for (std::string_view known : {"0.3", "0.4-dev1", "0.4", "1.0", "1.1-dev1", "1.1"})
        if (format == known)
            return true;
    return false;
}

namespace {
/// A string's bytes on the heap at its size (short ones live inside it).
std::uint64_t heap_bytes(std::string const& s) { return s.size() > 15 ? s.size() + 1 : 0; }
} // namespace

std::uint64_t catalog_contents::memory_bytes() const {
    std::uint64_t bytes = sizeof(*this) + heap_bytes(format) + heap_bytes(data_path) +
                          retained_snapshots.size() * sizeof(std::uint64_t);
    for (auto const& t : tables) {
        bytes += sizeof(t) + heap_bytes(t.name);
        for (auto const& f : t.files)
            bytes += sizeof(f) + heap_bytes(f.path) + (f.deletes ? heap_bytes(f.deletes->path) : 0);
    }
    for (auto const& v : views)
        bytes += sizeof(v) + heap_bytes(v.name) + heap_bytes(v.dialect) + heap_bytes(v.sql);
    for (auto const& n : needed)
        bytes += sizeof(n) + heap_bytes(n.path);
    for (auto const& p : problems)
        bytes += sizeof(p) + heap_bytes(p.message);
    return bytes;
}

std::uint64_t catalog_contents::data_file_count() const {
    std::uint64_t count = 0;
    for (auto const& t : tables)
        count += t.files.size();
    return count;
}

std::uint64_t catalog_contents::total_bytes() const {
    std::uint64_t sum = 0;
    for (auto const& f : needed)
        sum += f.bytes;
    return sum;
}

bool catalog_contents::has_deletes() const {
    for (auto const& t : tables)
        for (auto const& f : t.files)
            if (f.deletes)
                return true;
    return false;
}

bool catalog_contents::has_renamed_columns() const {
    for (auto const& t : tables)
        if (t.renamed_columns)
            return true;
    return false;
}

} // namespace mirror::catalog
