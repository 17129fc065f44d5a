#include "core/io/text.hpp"

namespace mirror::io {

namespace {

bool is_continuation(unsigned char c) { return (c & 0xc0) == 0x80; }

/// The length of the valid UTF-8 character at the start of `text` (no overlong forms, no
/// surrogates, nothing past U+10FFFF), or 0 when it does not start with one.
std::size_t character_length(std::string_view text) {
    auto const* p = reinterpret_cast<unsigned char const*>(text.data());
    unsigned char c = p[0];
    if (c < 0x80)
        return 1;
    std::size_t length = 0;
    unsigned code = 0, min = 0;
    if ((c & 0xe0) == 0xc0)
        length = 2, code = c & 0x1f, min = 0x80;
    else if ((c & 0xf0) == 0xe0)
        length = 3, code = c & 0x0f, min = 0x800;
    else if ((c & 0xf8) == 0xf0)
        length = 4, code = c & 0x07, min = 0x10000;
    else
        return 0;
    if (text.size() < length)
        return 0;
    for (std::size_t i = 1; i < length; ++i) {
        if (!is_continuation(p[i]))
            return 0;
        code = code << 6 | (p[i] & 0x3f);
    }
    if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff))
        return 0;
    return length;
}

} // namespace

std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes) noexcept {
    if (text.size() <= max_bytes)
        return text;
    // The byte just past the cut: a continuation byte means a character straddles it;
    // back off to where that character starts (at most 3 bytes back in valid UTF-8).
    std::size_t cut = max_bytes;
    for (int back = 0; back < 3 && cut > 0 && is_continuation(static_cast<unsigned char>(text[cut])); ++back)
        --cut;
    if (cut < max_bytes) {
        auto length = character_length(text.substr(cut));
        if (length == 0 || cut + length <= max_bytes)
            cut = max_bytes; // no character straddles the cut: stray bytes, cut where the limit falls
    }
    return text.substr(0, cut);
}

std::string valid_utf8(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    while (!text.empty()) {
        if (auto length = character_length(text); length != 0) {
            out.append(text.substr(0, length));
            text.remove_prefix(length);
        } else {
            out.append("\xef\xbf\xbd"); // U+FFFD REPLACEMENT CHARACTER
            text.remove_prefix(1);
        }
    }
    return out;
}

} // namespace mirror::io
