#include "daemon/common/terminal_text.hpp"

#include <cstdio>

namespace mirror::daemon {

namespace {

constexpr char hex[] = "0123456789abcdef";

void byte_escape(std::string& out, unsigned char c) {
    out += "\\x";
    out += hex[c >> 4];
    out += hex[c & 15];
}

bool is_bidi_control(char32_t cp) {
    return cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

/// The length of the valid UTF-8 sequence at `at` (its code point in `cp`), 0 if invalid.
std::size_t utf8_sequence(std::string_view text, std::size_t at, char32_t& cp) {
    auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    unsigned char const lead = byte(at);
    std::size_t length = lead < 0xc2 ? 0 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : lead < 0xf5 ? 4 : 0;
    if (length == 0 || at + length > text.size())
        return 0;
    cp = lead & (0xff >> (length + 1));
    for (std::size_t i = 1; i < length; ++i) {
        if ((byte(at + i) & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (byte(at + i) & 0x3f);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    char32_t const least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[length] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
        return 0;
    return length;
}

} // namespace

std::string terminal_safe(std::string_view text, bool keep_newlines) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t at = 0; at < text.size();) {
        auto const c = static_cast<unsigned char>(text[at]);
        if (c < 0x80) {
            if (c == '\n' && keep_newlines)
                out += '\n';
            else if (c == '\n')
                out += "\\n";
            else if (c == '\t')
                out += "\\t";
            else if (c < 0x20 || c == 0x7f)
                byte_escape(out, c);
            else
                out += static_cast<char>(c);
            ++at;
            continue;
        }
        char32_t cp = 0;
        std::size_t length = utf8_sequence(text, at, cp);
        if (length == 0) {
            byte_escape(out, c);
            ++at;
            continue;
        }
        if ((cp >= 0x80 && cp <= 0x9f) || is_bidi_control(cp)) {
            char shown[16];
            std::snprintf(shown, sizeof shown, "\\u{%04x}", static_cast<unsigned>(cp));
            out += shown;
        } else {
            out.append(text.substr(at, length));
        }
        at += length;
    }
    return out;
}

void print_error(std::string_view message) {
    std::string line = "fdl-mirror: " + terminal_safe(message, true) + "\n";
    std::fwrite(line.data(), 1, line.size(), stderr);
}

} // namespace mirror::daemon
