#include "core/fdl/small_files.hpp"

#include "core/fdl/json_fields.hpp"
#include "core/fdl/detail/json_top_level.hpp"

namespace mirror::fdl {

result<dataset_summary> parse_dataset(std::string_view text, std::string_view file) {
    // Read without a tree: a dataset.json may hold anything under its own keys, and a
    // tree of many small values would cost ten times the text.
    auto top = detail::read_top_level(text, file, {"name", "title", "annotations", "extensions"});
    if (!top)
        return top.error();
    if (top->kind != "an object")
        return make_error(fdl_errc::wrong_type,
                          std::string(file) + ": expected a JSON object, found " + std::string(top->kind));
    auto fail = [&](fdl_errc code, std::string_view key, std::string const& why) {
        return make_error(code, std::string(file) + ": " + std::string(key) + ": " + why);
    };
    dataset_summary summary;
    for (std::string_view key : {"name", "title"}) {
        auto found = top->fields.find(key);
        if (found == top->fields.end())
            return fail(fdl_errc::missing_field, key, "missing");
        if (!found->second.text)
            return fail(fdl_errc::wrong_type, key, "expected a string, found " + std::string(found->second.kind));
        (key == "name" ? summary.name : summary.title) = std::move(*found->second.text);
    }
    for (std::string_view key : {"annotations", "extensions"})
        if (auto found = top->fields.find(key); found != top->fields.end() && found->second.kind != "an object")
            return fail(fdl_errc::wrong_type, key, "expected an object, found " + std::string(found->second.kind));
    return summary;
}

result<expiry> parse_expiry(std::string_view text, std::string_view file) {
    auto json = parse_json(text, file);
    if (!json)
        return json.error();
    auto top = object_fields::top(*json, file);
    if (!top)
        return top.error();
    expiry out;
    if (auto ok = field_reader(*top).optional_string("reason", out.reason).done(); !ok)
        return ok.error();
    return out;
}

} // namespace mirror::fdl
