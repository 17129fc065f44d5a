#pragma once
// The error type of every layer (verify is the lowest): a classified code plus a message
// that names the object.

#include <boost/system/error_code.hpp>
#include <boost/system/result.hpp>

#include <iosfwd>
#include <string>
#include <utility>

namespace mirror {

/// An expected failure. `code` classifies it (retry, reporting and exit codes read only
/// the code); `message` is for people and names the object, the field and the reason,
/// e.g. "versions/019a…/version.json: catalog.sha256: not 64 hex digits".
/// A plain error_code cannot carry the object's name, hence this pair.
struct error {
    boost::system::error_code code;
    std::string message;
};

template <class T>
using result = boost::system::result<T, error>;

/// Builds an error from any registered error-code enum.
template <class Errc>
error make_error(Errc code, std::string message) {
    return error{make_error_code(code), std::move(message)};
}

/// Prefixes the message with the object it happened to, "origin: " or "versions/x/".
error with_context(error e, std::string const& context);

/// Prints the message (what doctest and logs show for a failed result).
std::ostream& operator<<(std::ostream& out, error const& e);

/// Lets result<T>::value() throw on an error (a bug at the call site).
[[noreturn]] void throw_exception_from_error(error const& e, boost::source_location const& loc);

} // namespace mirror
