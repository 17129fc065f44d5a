#pragma once
// Duplicate keys in a JSON object: parsers disagree on which one wins (the first, the
// last, an error), so a signed record with two would be read two ways. FDL files with
// them are refused.

#include <optional>
#include <string>
#include <string_view>

namespace mirror::fdl::detail {

/// A key that appears twice in one object of `text` (compared after escapes are decoded,
/// so "a" and "\u0061" are one key), with its dotted position ("refs.main"); nullopt when
/// there is none, or when `text` is not JSON (the parser says why). It keeps 8 bytes for
/// each key of the objects open at once (a hash; the keys of a suspect object are read
/// again as text), so a file of many short keys costs about its own size, not many times
/// it (issue 45: a 16 MiB refs.json of short keys once took hundreds of MiB here).
std::optional<std::string> duplicate_json_key(std::string_view text);

} // namespace mirror::fdl::detail
