#include "core/fdl/paths.hpp"

namespace mirror::fdl {

bool is_valid_utf8(std::string_view text) noexcept {
    auto const* p = reinterpret_cast<unsigned char const*>(text.data());
    auto const* end = p + text.size();
    while (p < end) {
        unsigned char c = *p;
        if (c < 0x80) {
            ++p;
            continue;
        }
        int extra = 0;
        unsigned min = 0;
        unsigned code = 0;
        if ((c & 0xe0) == 0xc0) {
            extra = 1, min = 0x80, code = c & 0x1f;
        } else if ((c & 0xf0) == 0xe0) {
            extra = 2, min = 0x800, code = c & 0x0f;
        } else if ((c & 0xf8) == 0xf0) {
            extra = 3, min = 0x10000, code = c & 0x07;
        } else {
            return false;
        }
        if (end - p <= extra)
            return false;
        for (int i = 1; i <= extra; ++i) {
            if ((p[i] & 0xc0) != 0x80)
                return false;
            code = code << 6 | (p[i] & 0x3f);
        }
        if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff))
            return false;
        p += extra + 1;
    }
    return true;
}

static bool is_control(char c) noexcept {
    auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
}

std::optional<std::string> relative_path_problem(std::string_view path) {
    if (path.empty())
        return "empty path";
    if (!is_valid_utf8(path))
        return "not valid UTF-8";
    for (char c : path) {
        if (c == '\0')
            return "contains a NUL byte";
        if (is_control(c))
            return "contains a control character";
        if (c == '\\')
            return "contains a backslash";
    }
    if (path.front() == '/')
        return "absolute path";
    if (path.find("://") != std::string_view::npos)
        return "a URL, not a relative path";
    if (path.back() == '/')
        return "ends in '/'";
    std::size_t start = 0;
    while (start <= path.size()) {
        std::size_t slash = path.find('/', start);
        std::string_view segment =
            path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
        if (segment.empty())
            return "empty path segment";
        if (segment == ".")
            return "'.' path segment";
        if (segment == "..")
            return "'..' path segment";
        if (slash == std::string_view::npos)
            break;
        start = slash + 1;
    }
    return std::nullopt;
}

std::optional<std::string> data_dir_problem(std::string_view data_dir) {
    if (data_dir.empty() || data_dir.back() != '/')
        return "must end in '/'";
    return relative_path_problem(data_dir.substr(0, data_dir.size() - 1));
}

std::optional<std::string> ref_name_problem(std::string_view name) {
    if (name.empty())
        return "empty ref name";
    if (!is_valid_utf8(name))
        return "not valid UTF-8";
    if (name == "@")
        return "'@' alone";
    for (char c : name) {
        if (is_control(c))
            return "contains a control character";
        switch (c) {
        case ' ': return "contains a space";
        case '~': return "contains '~'";
        case '^': return "contains '^'";
        case ':': return "contains ':'";
        case '?': return "contains '?'";
        case '*': return "contains '*'";
        case '[': return "contains '['";
        case '\\': return "contains a backslash";
        default: break;
        }
    }
    if (name.find("..") != std::string_view::npos)
        return "contains '..'";
    if (name.find("@{") != std::string_view::npos)
        return "contains '@{'";
    if (name.front() == '/' || name.back() == '/')
        return "begins or ends with '/'";
    if (name.find('/') == std::string_view::npos)
        return "a one-level name (refs live under refs/)";
    if (name.back() == '.')
        return "ends with '.'";
    std::size_t start = 0;
    while (true) {
        std::size_t slash = name.find('/', start);
        std::string_view part =
            name.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
        if (part.empty())
            return "empty component";
        if (part.front() == '.')
            return "a component begins with '.'";
        if (part.ends_with(".lock"))
            return "a component ends with '.lock'";
        if (slash == std::string_view::npos)
            break;
        start = slash + 1;
    }
    return std::nullopt;
}

bool is_mirrored_ref(std::string_view name) noexcept {
    return (name.starts_with("refs/heads/") && name.size() > 11) ||
           (name.starts_with("refs/tags/") && name.size() > 10);
}

} // namespace mirror::fdl
