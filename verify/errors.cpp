#include "verify/errors.hpp"

#include <string>

namespace mirror::verify {

char const* kind_name(verify_errc e) noexcept {
    switch (e) {
    case verify_errc::malformed_armor: return "malformed_armor";
    case verify_errc::malformed_signature: return "malformed_signature";
    case verify_errc::unsupported_version: return "unsupported_version";
    case verify_errc::unsupported_hash: return "unsupported_hash";
    case verify_errc::unsupported_key_type: return "unsupported_key_type";
    case verify_errc::weak_key: return "weak_key";
    case verify_errc::unsupported_algorithm: return "unsupported_algorithm";
    case verify_errc::certificate_unsupported: return "certificate_unsupported";
    case verify_errc::namespace_mismatch: return "namespace_mismatch";
    case verify_errc::bad_signature: return "bad_signature";
    case verify_errc::untrusted_key: return "untrusted_key";
    case verify_errc::principal_not_allowed: return "principal_not_allowed";
    case verify_errc::namespace_not_allowed: return "namespace_not_allowed";
    case verify_errc::outside_validity: return "outside_validity";
    case verify_errc::malformed_allowed_signers: return "malformed_allowed_signers";
    case verify_errc::too_large: return "too_large";
    case verify_errc::missing_signature: return "missing_signature";
    case verify_errc::security_key_flags: return "security_key_flags";
    case verify_errc::unusable_signing_key: return "unusable_signing_key";
    }
    return "unknown";
}

namespace {
class category final : public boost::system::error_category {
public:
    char const* name() const noexcept override { return "verify"; }
    std::string message(int value) const override { return kind_name(static_cast<verify_errc>(value)); }
};
} // namespace

boost::system::error_category const& verify_category() noexcept {
    static category const instance;
    return instance;
}

} // namespace mirror::verify
