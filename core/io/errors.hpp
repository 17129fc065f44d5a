#pragma once
// The one error vocabulary of every store backend (docs/development.md, "Errors":
// classify once, at the edge).

#include <boost/system/error_code.hpp>
#include <type_traits>

namespace mirror::io {

enum class store_errc {
    not_found = 1,  ///< no object under that key
    already_exists, ///< a create-only write lost: the key is taken
    access_denied,  ///< permissions
    transient,      ///< worth retrying: interrupted, busy, throttled, timed out
    rejected,       ///< refused: an unsafe key, a request the server refuses (4xx), a bad answer
    unsupported,    ///< the backend cannot do this (see its caps) or the scheme is not built
    io_error,       ///< a permanent failure of the medium: disk full, read-only, EIO
    too_large,      ///< an object past the size the caller accepts
    not_a_file,     ///< a folder store's key names a symbolic link, a folder or a special file
    conflict,       ///< a conditional write lost (the object changed since it was read), or a
                    ///< write refused because this instance no longer holds the repository's lease
};

boost::system::error_category const& store_category() noexcept;

inline boost::system::error_code make_error_code(store_errc e) noexcept {
    return {static_cast<int>(e), store_category()};
}

/// True for failures a retry may cure.
bool is_retryable(boost::system::error_code const& code) noexcept;

} // namespace mirror::io

template <>
struct boost::system::is_error_code_enum<mirror::io::store_errc> : std::true_type {};
