#include "core/s3/xml_shape.hpp"

#include <algorithm>
#include <vector>

namespace mirror::s3 {

namespace {

bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == ':' ||
           c == '.' || c == '-';
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/// The end of a tag that opens at `at` ('<'): the position of its '>', skipping quoted
/// attribute values; npos when it never closes.
std::size_t tag_end(std::string_view xml, std::size_t at) {
    char quote = 0;
    for (std::size_t i = at + 1; i < xml.size(); ++i) {
        char c = xml[i];
        if (quote != 0) {
            if (c == quote)
                quote = 0;
        } else if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == '>') {
            return i;
        }
    }
    return std::string_view::npos;
}

std::string shown(std::string_view name) { return "<" + std::string(name.substr(0, 40)) + ">"; }

} // namespace

std::optional<std::string> xml_shape_problem(std::string_view xml, std::string_view root, std::size_t max_depth) {
    std::vector<std::string_view> open;
    bool root_seen = false;
    std::size_t at = 0;
    while (true) {
        auto next = xml.find('<', at);
        // Text lies only inside the root; around it, whitespace alone.
        for (std::size_t i = at; i < std::min(next, xml.size()); ++i)
            if (open.empty() && !is_space(xml[i]))
                return std::string(root_seen ? "text after the root element" : "text before the root element");
        if (next == std::string_view::npos)
            break;
        std::string_view rest = xml.substr(next);
        if (rest.starts_with("<!--")) {
            auto end = xml.find("-->", next + 4);
            if (end == std::string_view::npos)
                return std::string("a comment that never ends");
            at = end + 3;
            continue;
        }
        if (rest.starts_with("<![CDATA[")) {
            auto end = xml.find("]]>", next + 9);
            if (end == std::string_view::npos || open.empty())
                return std::string("a CDATA section out of place or that never ends");
            at = end + 3;
            continue;
        }
        if (rest.starts_with("<!"))
            return std::string("a DOCTYPE or declaration, which an S3 answer never has");
        if (rest.starts_with("<?")) {
            auto end = xml.find("?>", next + 2);
            if (end == std::string_view::npos)
                return std::string("a processing instruction that never ends");
            at = end + 2;
            continue;
        }
        auto end = tag_end(xml, next);
        if (end == std::string_view::npos)
            return std::string("a tag that never closes");
        std::string_view tag = xml.substr(next + 1, end - next - 1);
        bool closing = tag.starts_with('/');
        if (closing)
            tag.remove_prefix(1);
        bool empty_element = !closing && tag.ends_with('/');
        std::size_t name_length = 0;
        while (name_length < tag.size() && is_name_char(tag[name_length]))
            ++name_length;
        std::string_view name = tag.substr(0, name_length);
        if (name.empty())
            return std::string("a tag without a name");
        if (closing) {
            if (open.empty() || open.back() != name)
                return "the closing tag </" + std::string(name.substr(0, 40)) + "> matches no open element";
            open.pop_back();
        } else {
            if (open.empty()) {
                if (root_seen)
                    return std::string("a second root element");
                if (name != root)
                    return "the root element is " + shown(name) + ", not " + shown(root);
                root_seen = true;
            }
            if (!empty_element) {
                if (open.size() == max_depth)
                    return "elements nested deeper than " + std::to_string(max_depth);
                open.push_back(name);
            }
        }
        at = end + 1;
    }
    if (!open.empty())
        return shown(open.back()) + " is never closed (the answer is cut short)";
    if (!root_seen)
        return "no " + shown(root) + " element";
    return std::nullopt;
}

} // namespace mirror::s3
