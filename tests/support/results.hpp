#pragma once
// Reading a result's failure in test assertions.

#include "verify/error.hpp"

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

} // namespace mirror::test
