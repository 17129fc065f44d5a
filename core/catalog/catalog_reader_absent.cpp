// The catalog reader of a build without DuckDB's C library: it says so.

#include "core/catalog/catalog_reader.hpp"

#include "core/catalog/errors.hpp"

namespace mirror::catalog {

bool reader_available() noexcept { return false; }

struct catalog_reader::impl {};

catalog_reader::catalog_reader(std::filesystem::path) {}
catalog_reader::~catalog_reader() = default;
void catalog_reader::prepare(std::string const&) {}
void catalog_reader::set_folder(std::filesystem::path) {}

result<catalog_contents> catalog_reader::read(std::filesystem::path const& private_copy, std::string const& name,
                                              read_options const& options) {
    return read_catalog(private_copy, name, options);
}

std::vector<result<catalog_contents>> catalog_reader::read_batch(std::vector<batch_item> const& items) {
    std::vector<result<catalog_contents>> out;
    for (auto const& item : items)
        out.push_back(read(item.file, item.name, item.options));
    return out;
}

result<catalog_contents> read_catalog(std::filesystem::path const&, std::string const& name, read_options const&) {
    return make_error(catalog_errc::unavailable, name + ": this build has no catalog reader (built without DuckDB)");
}

} // namespace mirror::catalog
