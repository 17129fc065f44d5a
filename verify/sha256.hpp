#pragma once
// SHA-256 over streamed bytes, and the lower-case hex form FDL files use.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace mirror::verify {

using sha256_digest = std::array<std::uint8_t, 32>;

/// Incremental SHA-256 (OpenSSL EVP). Feed with update(), then call finish() once.
/// Not copyable; a moved-from hasher must not be used. Throws std::bad_alloc only when
/// OpenSSL cannot allocate its context (a bug-class failure, not an expected one).
class sha256_hasher {
public:
    sha256_hasher();
    ~sha256_hasher();
    sha256_hasher(sha256_hasher&&) noexcept;
    sha256_hasher& operator=(sha256_hasher&&) noexcept;

    void update(std::span<std::byte const> bytes);
    void update(std::string_view text);
    /// Returns the digest; the hasher is reset and can be fed again.
    sha256_digest finish();

private:
    struct state;
    std::unique_ptr<state> state_;
};

/// The digest of a whole buffer.
sha256_digest sha256_of(std::string_view bytes);

/// HMAC-SHA256 of `data` under `key` (RFC 2104): SigV4's signing keys, the webhooks' signatures.
sha256_digest hmac_sha256(std::span<std::uint8_t const> key, std::string_view data);
inline sha256_digest hmac_sha256(std::string_view key, std::string_view data) {
    return hmac_sha256(std::span(reinterpret_cast<std::uint8_t const*>(key.data()), key.size()), data);
}

/// Compares two byte strings in time that depends on their lengths only (a secret, a MAC).
bool same_bytes(std::string_view a, std::string_view b) noexcept;

/// 64 lower-case hex digits.
std::string to_hex(sha256_digest const& digest);

/// Parses exactly 64 lower-case hex digits (the form FDL writes); anything else is nullopt.
std::optional<sha256_digest> parse_sha256_hex(std::string_view text);

} // namespace mirror::verify
