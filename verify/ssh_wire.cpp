#include "verify/ssh_wire.hpp"

namespace mirror::verify {

std::optional<std::uint32_t> wire_reader::u32() {
    if (rest_.size() < 4)
        return std::nullopt;
    auto b = [&](std::size_t i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(rest_[i])); };
    std::uint32_t value = b(0) << 24 | b(1) << 16 | b(2) << 8 | b(3);
    rest_.remove_prefix(4);
    return value;
}

std::optional<std::string_view> wire_reader::bytes(std::size_t count) {
    if (rest_.size() < count)
        return std::nullopt;
    auto out = rest_.substr(0, count);
    rest_.remove_prefix(count);
    return out;
}

std::optional<std::string_view> wire_reader::string() {
    auto saved = rest_;
    auto length = u32();
    if (!length)
        return std::nullopt;
    auto out = bytes(*length);
    if (!out)
        rest_ = saved;
    return out;
}

std::optional<std::string_view> wire_reader::cstring() {
    auto saved = rest_;
    auto out = string();
    if (!out)
        return std::nullopt;
    auto nul = out->find('\0');
    if (nul == std::string_view::npos)
        return out;
    if (nul + 1 != out->size()) {
        rest_ = saved;
        return std::nullopt;
    }
    return out->substr(0, nul);
}

std::optional<std::string_view> wire_reader::unsigned_mpint() {
    auto saved = rest_;
    auto out = string();
    if (!out || out->size() > 2049 || (!out->empty() && (static_cast<unsigned char>((*out)[0]) & 0x80) != 0)) {
        rest_ = saved;
        return std::nullopt;
    }
    while (!out->empty() && (*out)[0] == '\0')
        out->remove_prefix(1);
    return out;
}

std::string wire_string(std::string_view bytes) {
    auto const n = static_cast<std::uint32_t>(bytes.size());
    std::string out{static_cast<char>(n >> 24), static_cast<char>(n >> 16), static_cast<char>(n >> 8),
                    static_cast<char>(n)};
    out += bytes;
    return out;
}

std::string wire_mpint(std::string_view magnitude) {
    if (!magnitude.empty() && (static_cast<unsigned char>(magnitude[0]) & 0x80) != 0)
        return wire_string(std::string(1, '\0') + std::string(magnitude));
    return wire_string(magnitude);
}

static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64_encode(std::string_view bytes) {
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    std::size_t i = 0;
    auto at = [&](std::size_t k) { return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[k])); };
    for (; i + 3 <= bytes.size(); i += 3) {
        std::uint32_t v = at(i) << 16 | at(i + 1) << 8 | at(i + 2);
        out += alphabet[v >> 18], out += alphabet[(v >> 12) & 63], out += alphabet[(v >> 6) & 63], out += alphabet[v & 63];
    }
    if (bytes.size() - i == 1) {
        std::uint32_t v = at(i) << 16;
        out += alphabet[v >> 18], out += alphabet[(v >> 12) & 63], out += "==";
    } else if (bytes.size() - i == 2) {
        std::uint32_t v = at(i) << 16 | at(i + 1) << 8;
        out += alphabet[v >> 18], out += alphabet[(v >> 12) & 63], out += alphabet[(v >> 6) & 63], out += '=';
    }
    return out;
}

static int value_of(char c) {
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

std::optional<std::string> base64_decode(std::string_view text) {
    std::string out;
    std::uint32_t group = 0;
    int filled = 0;
    int padding = 0;
    for (char c : text) {
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
            continue;
        if (c == '=') {
            // Padding only completes a group of two or three characters.
            if (filled < 2)
                return std::nullopt;
            ++padding;
            if (filled + padding > 4)
                return std::nullopt;
            continue;
        }
        if (padding > 0)
            return std::nullopt; // data after padding
        int v = value_of(c);
        if (v < 0)
            return std::nullopt;
        group = group << 6 | static_cast<std::uint32_t>(v);
        if (++filled == 4) {
            out += static_cast<char>(group >> 16), out += static_cast<char>(group >> 8), out += static_cast<char>(group);
            group = 0, filled = 0;
        }
    }
    if (padding > 0) {
        if (filled + padding != 4)
            return std::nullopt;
        // The bits past the last byte must be zero, as b64_pton requires.
        if ((filled == 2 && (group & 0xf) != 0) || (filled == 3 && (group & 0x3) != 0))
            return std::nullopt;
        group <<= 6 * padding;
        out += static_cast<char>(group >> 16);
        if (filled == 3)
            out += static_cast<char>(group >> 8);
        return out;
    }
    if (filled != 0)
        return std::nullopt; // a partial group without padding
    return out;
}

} // namespace mirror::verify
