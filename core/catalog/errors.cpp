#include "core/catalog/errors.hpp"

#include <string>

namespace mirror::catalog {

char const* kind_name(catalog_errc e) noexcept {
    switch (e) {
    case catalog_errc::cannot_open: return "cannot_open";
    case catalog_errc::query_failed: return "query_failed";
    case catalog_errc::unknown_format: return "unknown_format";
    case catalog_errc::too_large: return "too_large";
    case catalog_errc::timed_out: return "timed_out";
    case catalog_errc::unavailable: return "unavailable";
    case catalog_errc::bad_catalog: return "bad_catalog";
    case catalog_errc::outside_data_dir: return "outside_data_dir";
    case catalog_errc::inlined_rows: return "inlined_rows";
    case catalog_errc::snapshot_mismatch: return "snapshot_mismatch";
    case catalog_errc::format_mismatch: return "format_mismatch";
    case catalog_errc::index_disagrees: return "index_disagrees";
    case catalog_errc::catalogs_disagree: return "catalogs_disagree";
    case catalog_errc::foreign_object: return "foreign_object";
    case catalog_errc::absolute_path: return "absolute_path";
    case catalog_errc::over_memory_limit: return "over_memory_limit";
    case catalog_errc::reader_crashed: return "reader_crashed";
    case catalog_errc::reader_limit: return "reader_limit";
    }
    return "unknown";
}

namespace {
class category final : public boost::system::error_category {
public:
    char const* name() const noexcept override { return "catalog"; }
    std::string message(int value) const override { return kind_name(static_cast<catalog_errc>(value)); }
};
} // namespace

boost::system::error_category const& catalog_category() noexcept {
    static category const instance;
    return instance;
}

} // namespace mirror::catalog
