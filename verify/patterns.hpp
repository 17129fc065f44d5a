#pragma once
// OpenSSH pattern lists (ssh_config(5), PATTERNS): the matching allowed_signers uses for
// principals and namespaces.

#include <cstddef>
#include <string_view>

namespace mirror::verify {

/// True when `text` matches `pattern`, where '*' matches any run of characters and '?'
/// any one character. Case-sensitive.
bool match_pattern(std::string_view text, std::string_view pattern) noexcept;

enum class list_match { none, positive, negated };

/// The length at which a pattern of a list makes the whole list match nothing, as in
/// OpenSSH 9.2's match_pattern_list.
inline constexpr std::size_t max_pattern_bytes = 1023;

/// Matches `text` against a comma-separated pattern list, as OpenSSH 9.2 does. A pattern
/// starting with '!' is negated: when it matches, the result is `negated` whatever else
/// matches. An empty pattern (a leading or doubled comma, but not a trailing one) matches
/// only the empty text. Patterns are tried left to right, and one of max_pattern_bytes or
/// more ends the walk with `none`, even after a positive match; a negated match before
/// it has already returned.
list_match match_pattern_list(std::string_view text, std::string_view list) noexcept;

} // namespace mirror::verify
