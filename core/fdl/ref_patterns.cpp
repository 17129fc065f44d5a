#include "core/fdl/ref_patterns.hpp"

#include "core/fdl/errors.hpp"
#include "core/fdl/paths.hpp"

#include <algorithm>

namespace mirror::fdl {

namespace {

std::vector<std::string> components_of(std::string_view text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (;;) {
        auto slash = text.find('/', start);
        out.emplace_back(text.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
        if (slash == std::string_view::npos)
            return out;
        start = slash + 1;
    }
}

/// `*` and `?` within one component: an iterative glob (the last `*` backtracks).
bool component_matches(std::string_view pattern, std::string_view name) {
    std::size_t p = 0, n = 0, star = std::string_view::npos, resume = 0;
    while (n < name.size()) {
        if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
            ++p, ++n;
        } else if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            resume = n;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            n = ++resume;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*')
        ++p;
    return p == pattern.size();
}

/// Components against components, `**` matching zero or more: a table of which prefixes
/// match, so that no input costs more than patterns x components steps.
bool components_match(std::vector<std::string> const& pattern, std::vector<std::string> const& name) {
    // can[j]: pattern[0..i) matches name[0..j)
    std::vector<char> can(name.size() + 1, 0), next(name.size() + 1, 0);
    can[0] = 1;
    for (auto const& part : pattern) {
        std::fill(next.begin(), next.end(), 0);
        for (std::size_t j = 0; j <= name.size(); ++j) {
            if (!can[j])
                continue;
            if (part == "**") {
                for (std::size_t k = j; k <= name.size(); ++k)
                    next[k] = 1;
                break; // every later j is covered
            }
            if (j < name.size() && component_matches(part, name[j]))
                next[j + 1] = 1;
        }
        can.swap(next);
    }
    return can[name.size()] != 0;
}

error bad(std::string_view text, std::string const& why) {
    return make_error(fdl_errc::bad_value, "ref pattern '" + std::string(text.substr(0, 80)) + "': " + why);
}

} // namespace

ref_pattern::ref_pattern(std::string text) : text_(std::move(text)), components_(components_of(text_)) {}

result<ref_pattern> ref_pattern::parse(std::string_view text) {
    if (text.size() > max_ref_pattern_bytes)
        return bad(text, "longer than " + std::to_string(max_ref_pattern_bytes) + " bytes");
    if (!text.starts_with("refs/"))
        return bad(text, "does not start with refs/ (patterns are over full ref names: refs/heads/main, refs/tags/v*)");
    for (auto const& component : components_of(text))
        if (component.find("**") != std::string::npos && component != "**")
            return bad(text, "'**' is a whole component of its own (refs/heads/**), not part of one");
    // With its wildcards as letters, a name Git accepts: the rest of it is ref-name text.
    std::string as_name(text);
    std::replace(as_name.begin(), as_name.end(), '*', 'x');
    std::replace(as_name.begin(), as_name.end(), '?', 'x');
    if (auto problem = ref_name_problem(as_name))
        return bad(text, *problem);
    return ref_pattern(std::string(text));
}

bool ref_pattern::matches(std::string_view ref) const { return components_match(components_, components_of(ref)); }

bool ref_selection::follows(std::string_view ref) const {
    if (!is_mirrored_ref(ref))
        return false;
    auto matches = [&](ref_pattern const& pattern) { return pattern.matches(ref); };
    bool const included = include.empty() || std::any_of(include.begin(), include.end(), matches);
    return included && std::none_of(exclude.begin(), exclude.end(), matches);
}

} // namespace mirror::fdl
