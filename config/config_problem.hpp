#pragma once
// One problem of a configuration file, with its place, as `file:line:col: message`.

#include <boost/assert/source_location.hpp>

#include <string>
#include <vector>

namespace mirror::config {

/// A problem found while reading a configuration file. `line` and `column` are 1-based,
/// as editors count them; both are 0 when the problem concerns the whole file (it cannot
/// be read, or it is empty).
struct config_problem {
    std::string file; ///< the file name as given to load_config or parse_config
    int line = 0;
    int column = 0;
    std::string message; ///< lower-case, no final period, naming the object ("repository 'x': …")

    /// "file:line:col: message", or "file: message" when the place is unknown.
    std::string text() const;

    friend bool operator==(config_problem const&, config_problem const&) = default;
};

/// Every problem of one file, in the order of their places (whole-file problems first).
using config_problems = std::vector<config_problem>;

/// Lets result<T, config_problems>::value() throw: std::runtime_error with every
/// problem's text, one per line. Found by argument-dependent lookup; only for startup code
/// that treats a bad configuration as "cannot start".
[[noreturn]] void throw_exception_from_error(config_problems const& problems, boost::source_location const& where);

} // namespace mirror::config
