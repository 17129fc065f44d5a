#pragma once
// Reading the top level of a JSON document without building its tree: what a check needs
// of a file whose body it ignores (dataset.json: name, title, and the kind of two blocks),
// at the cost of the text alone, however many values lie deeper.

#include "verify/error.hpp"

#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace mirror::fdl::detail {

/// A value at the top level: its kind as type_name() says it ("a string", "an object"…),
/// and its text when it is a string.
struct top_level_value {
    std::string_view kind;
    std::optional<std::string> text;
};

struct top_level {
    std::string_view kind; ///< of the document itself
    /// The keys asked for that the top-level object has.
    std::map<std::string, top_level_value, std::less<>> fields;
};

/// Reads `text` as parse_json would (valid UTF-8, at most 64 levels, one value, no key
/// twice in one object), failing as it does, but keeps only the top level's `keys`.
result<top_level> read_top_level(std::string_view text, std::string_view file,
                                 std::initializer_list<std::string_view> keys);

} // namespace mirror::fdl::detail
