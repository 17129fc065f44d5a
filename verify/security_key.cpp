#include "verify/security_key.hpp"

#include "verify/errors.hpp"
#include "verify/openssl_key.hpp"
#include "verify/sha256.hpp"
#include "verify/ssh_wire.hpp"

namespace mirror::verify {

namespace {

error malformed(std::string const& why) {
    return make_error(verify_errc::malformed_signature, "signature: " + why);
}

std::string digest_bytes(std::string_view data) {
    auto digest = sha256_of(data);
    return std::string(reinterpret_cast<char const*>(digest.data()), digest.size());
}

} // namespace

result<security_key_signature> parse_security_key_signature(ssh_public_key const& key, std::string_view blob) {
    wire_reader in(blob);
    auto type = in.cstring();
    auto signature = in.string();
    auto flags = in.bytes(1);
    auto counter = in.u32();
    if (!type || !signature || !flags || !counter || !in.empty())
        return malformed(key.type + " signature is not type, signature, flags and counter, with nothing after");
    if (*type == "webauthn-sk-ecdsa-sha2-nistp256@openssh.com")
        return make_error(verify_errc::unsupported_algorithm,
                          "signature: webauthn signatures of security keys are not verified by this build");
    if (*type != key.type)
        return make_error(verify_errc::unsupported_algorithm, "signature: algorithm '" +
                                                                  std::string(type->substr(0, 60)) +
                                                                  "' does not match the " + key.type + " key");
    if (key.type == "sk-ssh-ed25519@openssh.com" && signature->size() != 64)
        return malformed(key.type + " signature is not 64 bytes");
    if (key.type == "sk-ecdsa-sha2-nistp256@openssh.com")
        if (auto problem = ecdsa_integers_problem(*signature))
            return malformed(key.type + " signature: " + *problem);
    return security_key_signature{std::string(*signature), static_cast<std::uint8_t>((*flags)[0]), *counter};
}

result<void> verify_security_key_signature(ssh_public_key const& key, security_key_signature const& signature,
                                           std::string_view signed_data) {
    error refused = make_error(verify_errc::bad_signature, "signature: does not verify over the message with its key");
    std::string const counter{static_cast<char>(signature.counter >> 24), static_cast<char>(signature.counter >> 16),
                              static_cast<char>(signature.counter >> 8), static_cast<char>(signature.counter)};
    std::string const signed_by_key = digest_bytes(key.application) + static_cast<char>(signature.flags) + counter +
                                      digest_bytes(signed_data);
    auto pkey = to_openssl(key);
    if (!pkey)
        return refused;
    if (key.type == "sk-ssh-ed25519@openssh.com") {
        if (!openssl_verifies(pkey.get(), nullptr, signature.signature, signed_by_key))
            return refused;
    } else {
        auto der = ecdsa_der(signature.signature);
        if (!der || !openssl_verifies(pkey.get(), EVP_sha256(), *der, signed_by_key))
            return refused;
    }
    return {};
}

} // namespace mirror::verify
