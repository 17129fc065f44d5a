#include "core/fdl/small_files.hpp"

#include "core/fdl/detail/json_fields.hpp"

namespace mirror::fdl {

result<dataset_summary> parse_dataset(std::string_view text, std::string_view file, std::size_t max_tree_bytes) {
    auto json = detail::parse_json(text, file, max_tree_bytes);
    if (!json)
        return json.error();
    auto top = detail::object_fields::top(*json, file);
    if (!top)
        return top.error();
    dataset_summary summary;
    auto name = top->string("name");
    if (!name)
        return name.error();
    summary.name = std::move(*name);
    auto title = top->string("title");
    if (!title)
        return title.error();
    summary.title = std::move(*title);
    for (std::string_view key : {"annotations", "extensions"})
        if (auto block = top->optional_child(key); !block)
            return block.error();
    return summary;
}

result<expiry> parse_expiry(std::string_view text, std::string_view file) {
    auto json = detail::parse_json(text, file);
    if (!json)
        return json.error();
    auto top = detail::object_fields::top(*json, file);
    if (!top)
        return top.error();
    auto reason = top->optional_string("reason");
    if (!reason)
        return reason.error();
    return expiry{std::move(*reason)};
}

} // namespace mirror::fdl
