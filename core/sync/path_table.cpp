#include "core/sync/path_table.hpp"

#include <openssl/rand.h>

#include <array>
#include <cstring>
#include <stdexcept>

namespace mirror::sync {

namespace {

std::array<unsigned char, 16> random_salt() {
    std::array<unsigned char, 16> salt{};
    if (RAND_bytes(salt.data(), static_cast<int>(salt.size())) != 1)
        throw std::runtime_error("OpenSSL cannot draw random bytes for the path tables' salt");
    return salt;
}

} // namespace

path_key path_key::of(std::string_view path) {
    static std::array<unsigned char, 16> const salt = random_salt();
    verify::sha256_hasher hasher;
    hasher.update(std::string_view(reinterpret_cast<char const*>(salt.data()), salt.size()));
    hasher.update(path);
    return {hasher.finish()};
}

std::size_t path_key::hash::operator()(path_key const& key) const noexcept {
    std::size_t out = 0;
    std::memcpy(&out, key.digest.data(), sizeof out);
    return out;
}

} // namespace mirror::sync
