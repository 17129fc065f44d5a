#include "core/fdl/refs.hpp"

#include "core/fdl/json_fields.hpp"
#include "core/fdl/ids.hpp"
#include "core/fdl/paths.hpp"

#include <boost/json/serialize.hpp>

namespace mirror::fdl {

static std::string_view without_final_newline(std::string_view text) {
    if (text.ends_with('\n'))
        text.remove_suffix(1);
    return text;
}

static std::string shown(std::string_view text) {
    // Quote a bounded, printable prefix: the text may be hostile.
    std::string out;
    for (char c : text.substr(0, 60))
        out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
    return "'" + out + (text.size() > 60 ? "…'" : "'");
}

result<std::string> parse_ref_file(std::string_view text, std::string_view file) {
    std::string_view id = without_final_newline(text);
    if (!is_version_id(id))
        return make_error(fdl_errc::bad_version_id,
                          std::string(file) + ": " + shown(text) + " is not a lower-case UUIDv7 version id");
    return std::string(id);
}

std::string render_ref_file(std::string_view version_id) {
    return std::string(version_id) + "\n";
}

result<head_value> parse_head(std::string_view text, std::string_view file) {
    std::string_view line = without_final_newline(text);
    head_value head;
    if (line.starts_with("ref: ")) {
        std::string_view name = line.substr(5);
        if (auto problem = ref_name_problem(name))
            return make_error(fdl_errc::bad_ref_name, std::string(file) + ": " + shown(name) + ": " + *problem);
        if (!is_mirrored_ref(name))
            return make_error(fdl_errc::bad_ref_name,
                              std::string(file) + ": " + shown(name) + ": not under refs/heads/ or refs/tags/");
        head.symbolic = std::string(name);
        return head;
    }
    if (is_version_id(line)) {
        head.detached = std::string(line);
        return head;
    }
    return make_error(fdl_errc::bad_value,
                      std::string(file) + ": " + shown(text) + " is neither 'ref: <name>' nor a version id");
}

static void add_ref(refs_document& out, std::string_view name, boost::json::value const& value) {
    static constexpr std::string_view file = "refs.json";
    auto refuse = [&](fdl_errc code, std::string const& why) {
        if (out.refused.size() < max_refused_listed)
            out.refused.push_back(make_error(code, std::string(file) + ": " + shown(name) + ": " + why));
        else
            ++out.refused_more;
    };
    if (auto problem = ref_name_problem(name))
        refuse(fdl_errc::bad_ref_name, *problem);
    else if (!value.is_string() || !is_version_id(value.get_string()))
        refuse(fdl_errc::bad_version_id, "not a lower-case UUIDv7 version id");
    else
        out.refs.emplace(std::string(name), std::string(value.get_string()));
}

result<refs_document> parse_refs_json(std::string_view text, std::size_t max_tree_bytes) {
    static constexpr std::string_view file = "refs.json";
    auto json = parse_json(text, file, max_tree_bytes);
    if (!json)
        return json.error();
    auto top = object_fields::top(*json, file);
    if (!top)
        return top.error();

    refs_document document;
    if (auto const* head = top->find("HEAD")) {
        if (!head->is_string())
            return top->fail(fdl_errc::wrong_type, "HEAD", "expected a string");
        auto parsed = parse_head(head->get_string(), "refs.json: HEAD");
        if (!parsed)
            return parsed.error();
        document.head = std::string(head->get_string());
    }
    if (auto const* refs = top->find("refs")) {
        if (!refs->is_object())
            return top->fail(fdl_errc::wrong_type, "refs", "expected an object");
        for (auto const& [name, value] : refs->get_object())
            add_ref(document, name, value);
    }
    // The tolerated flat shape: keys that are ref names themselves.
    for (auto const& [name, value] : top->object())
        if (name.starts_with("refs/"))
            add_ref(document, name, value);
    return document;
}

std::string render_refs_json(refs_document const& document) {
    std::string out = "{\n";
    if (document.head)
        out += "  \"HEAD\": " + boost::json::serialize(boost::json::value(*document.head)) + ",\n";
    out += "  \"refs\": {";
    bool first = true;
    for (auto const& [name, id] : document.refs) {
        out += first ? "\n" : ",\n";
        out += "    " + boost::json::serialize(boost::json::value(name)) + ": \"" + id + "\"";
        first = false;
    }
    out += first ? "}\n}\n" : "\n  }\n}\n";
    return out;
}

} // namespace mirror::fdl
