#include "core/fdl/ids.hpp"

namespace mirror::fdl {

bool is_lower_uuid(std::string_view text) noexcept {
    if (text.size() != 36)
        return false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        bool dash_position = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash_position) {
            if (c != '-')
                return false;
        } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
            return false;
        }
    }
    return true;
}

bool is_version_id(std::string_view text) noexcept {
    if (!is_lower_uuid(text))
        return false;
    char variant = text[19];
    return text[14] == '7' && (variant == '8' || variant == '9' || variant == 'a' || variant == 'b');
}

} // namespace mirror::fdl
