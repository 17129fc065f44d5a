#pragma once
// The SSH wire encoding (RFC 4251, section 5) and base64, for reading signatures and keys.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mirror::verify {

/// Reads uint32 and string fields from a byte string, never past its end.
class wire_reader {
public:
    explicit wire_reader(std::string_view bytes) : rest_(bytes) {}
    std::optional<std::uint32_t> u32();
    /// A length-prefixed string; nullopt when the length runs past the end.
    std::optional<std::string_view> string();
    std::optional<std::string_view> bytes(std::size_t count);
    bool empty() const { return rest_.empty(); }

private:
    std::string_view rest_;
};

/// Standard base64 without line breaks.
std::string base64_encode(std::string_view bytes);

/// Decodes standard base64, skipping whitespace (as OpenSSH's b64_pton does); nullopt
/// for any other character, a misplaced '=' or a partial final group.
std::optional<std::string> base64_decode(std::string_view text);

} // namespace mirror::verify
