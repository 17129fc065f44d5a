#include "config/values.hpp"

#include <charconv>

namespace mirror::config {

std::optional<signature_policy> parse_signature_policy(std::string_view text) noexcept {
    if (text == "required")
        return signature_policy::required;
    if (text == "if-present")
        return signature_policy::if_present;
    if (text == "off")
        return signature_policy::off;
    return std::nullopt;
}

std::string_view to_string(signature_policy policy) noexcept {
    switch (policy) {
    case signature_policy::required: return "required";
    case signature_policy::if_present: return "if-present";
    case signature_policy::off: return "off";
    }
    return "off";
}

std::optional<std::uint64_t> parse_count(std::string_view text, std::uint64_t max) noexcept {
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value == 0 || value > max)
        return std::nullopt;
    return value;
}

} // namespace mirror::config
