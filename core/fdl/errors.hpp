#pragma once
// Error codes for reading FDL repository files.

#include <boost/system/error_code.hpp>
#include <type_traits>

namespace mirror::fdl {

/// Why an FDL file or name was refused. Messages name the file and field.
enum class fdl_errc {
    bad_json = 1,          ///< not JSON, not UTF-8, too deep, trailing bytes
    missing_field,         ///< a required field is absent
    wrong_type,            ///< a field has another JSON type than the spec's
    bad_value,             ///< a field has the right type but an invalid value
    unknown_major_version, ///< `fdl` names a major version this build does not know
    bad_version_id,        ///< not a lower-case hyphenated UUIDv7
    id_mismatch,           ///< an id disagrees with where the file sits
    bad_path,              ///< a path that is absolute, escapes its folder or has bad bytes
    bad_ref_name,          ///< a ref name that Git's check-ref-format refuses
    too_large,             ///< a file past the size this reader accepts
};

boost::system::error_category const& fdl_category() noexcept;

inline boost::system::error_code make_error_code(fdl_errc e) noexcept {
    return {static_cast<int>(e), fdl_category()};
}

} // namespace mirror::fdl

template <>
struct boost::system::is_error_code_enum<mirror::fdl::fdl_errc> : std::true_type {};
