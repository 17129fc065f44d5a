#include "core/sync/errors.hpp"

#include <string>

namespace mirror::sync {

char const* kind_name(sync_errc e) noexcept {
    switch (e) {
    case sync_errc::size_mismatch: return "size_mismatch";
    case sync_errc::sha256_mismatch: return "sha256_mismatch";
    case sync_errc::missing_file: return "missing_file";
    case sync_errc::not_a_regular_file: return "not_a_regular_file";
    case sync_errc::no_data_file_source: return "no_data_file_source";
    case sync_errc::data_file_conflict: return "data_file_conflict";
    case sync_errc::ancestor_held: return "ancestor_held";
    case sync_errc::missing_catalog: return "missing_catalog";
    case sync_errc::history_broken: return "history_broken";
    case sync_errc::version_rewritten: return "version_rewritten";
    case sync_errc::file_deleted_at_origin: return "file_deleted_at_origin";
    case sync_errc::file_added_at_origin: return "file_added_at_origin";
    case sync_errc::tag_moved: return "tag_moved";
    case sync_errc::fdl_json_changed: return "fdl_json_changed";
    case sync_errc::data_file_changed_at_origin: return "data_file_changed_at_origin";
    case sync_errc::over_memory_limit: return "over_memory_limit";
    case sync_errc::branch_rewound: return "branch_rewound";
    case sync_errc::refused_ref: return "refused_ref";
    case sync_errc::repository_mismatch: return "repository_mismatch";
    case sync_errc::mirror_not_usable: return "mirror_not_usable";
    case sync_errc::stopped: return "stopped";
    }
    return "unknown";
}

namespace {
class category final : public boost::system::error_category {
public:
    char const* name() const noexcept override { return "sync"; }
    std::string message(int value) const override { return kind_name(static_cast<sync_errc>(value)); }
};
} // namespace

boost::system::error_category const& sync_category() noexcept {
    static category const instance;
    return instance;
}

std::string kind_of(boost::system::error_code const& code) {
    if (code.category() == sync_category())
        return kind_name(static_cast<sync_errc>(code.value()));
    std::string message = code.message();
    for (char& c : message)
        if (c == ' ')
            c = '_';
    return std::string(code.category().name()) + "." + message;
}

} // namespace mirror::sync
