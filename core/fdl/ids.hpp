#pragma once
// Version IDs: lower-case, hyphenated UUIDv7 (spec/versions, "Version ID").

#include <string_view>

namespace mirror::fdl {

/// True for the canonical 8-4-4-4-12 form in lower-case hex (any UUID version).
bool is_lower_uuid(std::string_view text) noexcept;

/// True for a lower-case hyphenated UUID whose version nibble is 7 and whose variant
/// is RFC 9562's (`8`, `9`, `a` or `b` at position 19).
bool is_version_id(std::string_view text) noexcept;

} // namespace mirror::fdl
