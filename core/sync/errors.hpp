#pragma once
// Why a version is held, and what counts as a violation of the origin's promises.

#include <boost/system/error_code.hpp>
#include <type_traits>

namespace mirror::sync {

enum class sync_errc {
    // A version is held (not published) for one of these; the next pass tries again.
    size_mismatch = 1,      ///< a file's size differs from what the repository pins
    sha256_mismatch,        ///< a file's digest differs from version.json
    missing_file,           ///< a file the version needs is absent at the origin
    not_a_regular_file,     ///< a symbolic link or special file where a file is needed
    no_data_file_source,    ///< no files.json, and the origin cannot be listed
    data_file_conflict,     ///< the mirror already holds a data file of another size
    ancestor_held,          ///< its first parent is held, so it cannot be published yet
    missing_catalog,        ///< a live version whose version.json pins no catalog
    history_broken,         ///< a parent cycle or a history too long to walk
    // Violations: the origin broke a promise; the mirror keeps what it has.
    version_rewritten,      ///< an immutable file of a published version changed
    file_deleted_at_origin, ///< a published version lost a file outside expiry
    file_added_at_origin,   ///< a published version gained a file the spec does not allow
    tag_moved,              ///< a tag points elsewhere than the mirror's copy
    branch_rewound,         ///< a branch moved to a version that does not descend from the mirror's
    refused_ref,            ///< a ref whose name or content is refused
    // The repository as a whole.
    repository_mismatch,    ///< the mirror holds another repository (another id)
    mirror_not_usable,      ///< the mirror store cannot list or write
    stopped,                ///< the pass was asked to stop (sync_options::stop_requested)
    // A violation, listed last so that the others keep their numbers.
    fdl_json_changed,       ///< the origin's fdl.json changed (same id and data_dir); the mirror keeps its copy
    data_file_changed_at_origin, ///< a data file the mirror copied has another size at the origin now
    // A version is held for this one too, listed last for the same reason.
    over_memory_limit, ///< checking it needs more memory than memory_limit allows one version
};

boost::system::error_category const& sync_category() noexcept;

inline boost::system::error_code make_error_code(sync_errc e) noexcept {
    return {static_cast<int>(e), sync_category()};
}

/// A short stable name for reports and metrics ("sha256_mismatch").
char const* kind_name(sync_errc e) noexcept;

/// The stable name of any error code this project produces ("store.not_found").
std::string kind_of(boost::system::error_code const& code);

} // namespace mirror::sync

template <>
struct boost::system::is_error_code_enum<mirror::sync::sync_errc> : std::true_type {};
