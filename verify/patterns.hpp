#pragma once
// OpenSSH pattern lists (ssh_config(5), PATTERNS): the matching allowed_signers uses for
// principals and namespaces.

#include <string_view>

namespace mirror::verify {

/// True when `text` matches `pattern`, where '*' matches any run of characters and '?'
/// any one character. Case-sensitive.
bool match_pattern(std::string_view text, std::string_view pattern) noexcept;

enum class list_match { none, positive, negated };

/// Matches `text` against a comma-separated pattern list. A pattern starting with '!' is
/// negated: when it matches, the result is `negated` whatever else matches.
list_match match_pattern_list(std::string_view text, std::string_view list) noexcept;

} // namespace mirror::verify
