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
    /// A string read as OpenSSH's sshbuf_get_cstring reads it: no NUL inside, but one NUL
    /// as its very last byte is allowed and dropped ("fdl\0" is "fdl"); nullopt otherwise.
    std::optional<std::string_view> cstring();
    /// An mpint read as OpenSSH's sshbuf_get_bignum2 reads a positive one: empty is zero,
    /// a set top bit (negative) is refused, leading zero bytes are skipped however many,
    /// at most 2049 bytes in all. The magnitude, without leading zeros.
    std::optional<std::string_view> unsigned_mpint();
    std::optional<std::string_view> bytes(std::size_t count);
    bool empty() const { return rest_.empty(); }

private:
    std::string_view rest_;
};

/// A length-prefixed string, as the wire encodes it.
std::string wire_string(std::string_view bytes);

/// A positive integer's magnitude (big-endian, no leading zeros) as a minimal mpint.
std::string wire_mpint(std::string_view magnitude);

/// Standard base64 without line breaks.
std::string base64_encode(std::string_view bytes);

/// Decodes standard base64, skipping whitespace (as OpenSSH's b64_pton does); nullopt
/// for any other character, a misplaced '=' or a partial final group.
std::optional<std::string> base64_decode(std::string_view text);

} // namespace mirror::verify
