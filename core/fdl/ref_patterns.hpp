#pragma once
// Which refs a partial mirror follows (spec README, "Partial mirrors"; issue 35): include
// and exclude patterns over full ref names. The syntax, the one every form of the
// configuration and the command line takes:
//
//   refs/heads/main      that ref alone (no wildcard: the whole name must be equal)
//   refs/tags/v*         `*` matches any run of characters within one component (no `/`)
//   refs/tags/v1.?       `?` matches one character, not `/`
//   refs/heads/**        `**`, a whole component, matches zero or more components
//
// A pattern starts with `refs/`; with its wildcards taken as letters it must be a ref name
// Git accepts (ref_name_problem), so that `*`, `?` and `[`, which no ref name holds, are
// never ambiguous. Patterns are case-sensitive, as ref names are.

#include "verify/error.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace mirror::fdl {

inline constexpr std::size_t max_ref_pattern_bytes = 255;

class ref_pattern {
public:
    /// The pattern, or fdl_errc::bad_value saying what is wrong with it.
    static result<ref_pattern> parse(std::string_view text);

    bool matches(std::string_view ref) const;
    std::string const& text() const { return text_; }
    friend bool operator==(ref_pattern const& a, ref_pattern const& b) { return a.text_ == b.text_; }

private:
    explicit ref_pattern(std::string text);
    std::string text_;
    std::vector<std::string> components_; ///< split on '/'
};

/// Include and exclude patterns together: a ref is followed when no include is given or
/// one matches, and no exclude matches. Only refs/heads/* and refs/tags/* are ever
/// followed (is_mirrored_ref), whatever the patterns say.
struct ref_selection {
    std::vector<ref_pattern> include;
    std::vector<ref_pattern> exclude;

    bool follows(std::string_view ref) const;
    /// Follows every ref a mirror copies: no pattern given.
    bool everything() const { return include.empty() && exclude.empty(); }
};

} // namespace mirror::fdl
