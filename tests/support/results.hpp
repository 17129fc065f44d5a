#pragma once
// Reading a result's failure in test assertions.

#include "verify/error.hpp"
#include "verify/errors.hpp"

#include <string>

namespace mirror::test {

/// The error code of a failed result; a default (success) code when it holds a value.
template <class T>
boost::system::error_code code_of(result<T> const& r) {
    return r ? boost::system::error_code{} : r.error().code;
}

/// The message of a failed result, or "(parsed)" when it holds a value.
template <class T>
std::string message_of(result<T> const& r) {
    return r ? std::string("(parsed)") : r.error().message;
}

/// The verify_errc name of a failed result ("untrusted_key"), "accepted" when it holds a
/// value, or "foreign error: …" for an error of another category.
template <class T>
std::string verify_kind_of(result<T> const& r) {
    if (r)
        return "accepted";
    if (r.error().code.category() != verify::verify_category())
        return "foreign error: " + r.error().message;
    return verify::kind_name(static_cast<verify::verify_errc>(r.error().code.value()));
}

} // namespace mirror::test
