#pragma once
// SSH public keys and signatures in OpenSSL's terms, for the checks this verifier makes
// with OpenSSL itself: certificate authorities' signatures and security-key signatures.

#include "verify/ssh_key.hpp"

#include <openssl/evp.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace mirror::verify {

using pkey_ptr = std::unique_ptr<EVP_PKEY, void (*)(EVP_PKEY*)>;

/// An OpenSSL key from a key parse_public_key_blob accepted (ed25519, ECDSA, RSA and the
/// security-key kinds, whose application OpenSSL does not need), or null.
pkey_ptr to_openssl(ssh_public_key const& key);

/// Why an ECDSA signature as SSH carries it (mpint r, mpint s, nothing after) is not one
/// OpenSSH reads (sshbuf_get_bignum2): an integer whose first byte has its top bit set is
/// negative, one of more than 2049 bytes (or 2049 whose first is not 0) too long. Leading
/// zero bytes are allowed, as OpenSSH allows them; an empty one is 0, which no signature
/// verifies with (refused here). libssh reads the bytes as unsigned, so a negative
/// encoding would verify there. nullopt when it is acceptable.
std::optional<std::string> ecdsa_integers_problem(std::string_view signature);

/// An ECDSA signature as SSH carries it (mpint r, mpint s, nothing after) in the DER form
/// OpenSSL verifies; nullopt when it is not that.
std::optional<std::string> ecdsa_der(std::string_view signature);

/// Verifies `signature` (Ed25519 bytes, or DER for ECDSA and the RSA bytes) by `key` over
/// `data`, hashed with `md` (null for Ed25519). True only when OpenSSL says it verifies.
bool openssl_verifies(EVP_PKEY* key, EVP_MD const* md, std::string_view signature, std::string_view data);

} // namespace mirror::verify
