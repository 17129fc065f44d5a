#include "verify/sha256.hpp"

#include <new>
#include <openssl/crypto.h>
#include <openssl/evp.h>

namespace mirror::verify {

struct sha256_hasher::state {
    EVP_MD_CTX* ctx = nullptr;
    ~state() { EVP_MD_CTX_free(ctx); }
};

static void start(EVP_MD_CTX* ctx) {
    if (EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) != 1)
        throw std::bad_alloc(); // only fails when OpenSSL is out of memory
}

sha256_hasher::sha256_hasher() : state_(std::make_unique<state>()) {
    state_->ctx = EVP_MD_CTX_new();
    if (state_->ctx == nullptr)
        throw std::bad_alloc();
    start(state_->ctx);
}

sha256_hasher::~sha256_hasher() = default;
sha256_hasher::sha256_hasher(sha256_hasher&&) noexcept = default;
sha256_hasher& sha256_hasher::operator=(sha256_hasher&&) noexcept = default;

void sha256_hasher::update(std::span<std::byte const> bytes) {
    EVP_DigestUpdate(state_->ctx, bytes.data(), bytes.size());
}

void sha256_hasher::update(std::string_view text) {
    EVP_DigestUpdate(state_->ctx, text.data(), text.size());
}

sha256_digest sha256_hasher::finish() {
    sha256_digest digest{};
    unsigned int length = 0;
    EVP_DigestFinal_ex(state_->ctx, digest.data(), &length);
    start(state_->ctx);
    return digest;
}

sha256_digest sha256_of(std::string_view bytes) {
    sha256_hasher hasher;
    hasher.update(bytes);
    return hasher.finish();
}

std::string to_hex(sha256_digest const& digest) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string text;
    text.reserve(64);
    for (auto byte : digest) {
        text.push_back(digits[byte >> 4]);
        text.push_back(digits[byte & 0x0f]);
    }
    return text;
}

static int hex_value(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1; // upper case is refused: FDL writes lower case
}

std::optional<sha256_digest> parse_sha256_hex(std::string_view text) {
    if (text.size() != 64)
        return std::nullopt;
    sha256_digest digest{};
    for (std::size_t i = 0; i < digest.size(); ++i) {
        int high = hex_value(text[2 * i]);
        int low = hex_value(text[2 * i + 1]);
        if (high < 0 || low < 0)
            return std::nullopt;
        digest[i] = static_cast<std::uint8_t>(high << 4 | low);
    }
    return digest;
}

sha256_digest hmac_sha256(std::span<std::uint8_t const> key, std::string_view data) {
    sha256_digest out{};
    std::size_t length = 0;
    auto const* bytes = reinterpret_cast<unsigned char const*>(data.data());
    if (EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA256", nullptr, key.data(), key.size(), bytes, data.size(),
                  out.data(), out.size(), &length) == nullptr ||
        length != out.size())
        throw std::bad_alloc(); // only fails when OpenSSL cannot allocate (or lacks SHA-256)
    return out;
}

bool same_bytes(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size())
        return false; // lengths are not the secret here: a MAC's is fixed, a token's is its own
    return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

} // namespace mirror::verify
