#include "verify/patterns.hpp"

namespace mirror::verify {

bool match_pattern(std::string_view text, std::string_view pattern) noexcept {
    // Iterative glob with backtracking to the last '*': linear in practice, and no
    // recursion for a hostile pattern to exhaust.
    std::size_t t = 0, p = 0;
    std::size_t star = std::string_view::npos, resume = 0;
    while (t < text.size()) {
        if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
            ++t, ++p;
        } else if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            resume = t;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            t = ++resume;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*')
        ++p;
    return p == pattern.size();
}

list_match match_pattern_list(std::string_view text, std::string_view list) noexcept {
    // Walks the list as OpenSSH's match_pattern_list does: an empty item is tried only
    // where a character follows it, so "" and "a," hold no empty pattern at the end.
    bool positive = false;
    std::size_t i = 0;
    while (i < list.size()) {
        bool negated = list[i] == '!';
        if (negated)
            ++i;
        std::size_t comma = list.find(',', i);
        std::size_t end = comma == std::string_view::npos ? list.size() : comma;
        // OpenSSH copies each pattern into a 1024-byte buffer and gives up on the whole
        // list, whatever matched before, at one of 1023 bytes or more (match.c).
        if (end - i >= max_pattern_bytes)
            return list_match::none;
        if (match_pattern(text, list.substr(i, end - i))) {
            if (negated)
                return list_match::negated;
            positive = true;
        }
        i = end + 1;
    }
    return positive ? list_match::positive : list_match::none;
}

} // namespace mirror::verify
