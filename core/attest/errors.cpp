#include "core/attest/errors.hpp"

#include <string>

namespace mirror::attest {

char const* kind_name(attest_errc e) noexcept {
    switch (e) {
    case attest_errc::missing: return "missing";
    case attest_errc::malformed: return "malformed";
    case attest_errc::bad_signature: return "bad_signature";
    case attest_errc::untrusted_key: return "untrusted_key";
    case attest_errc::expired: return "expired";
    case attest_errc::stale: return "stale";
    case attest_errc::mismatch: return "mismatch";
    case attest_errc::too_large: return "too_large";
    }
    return "unknown";
}

namespace {
class category final : public boost::system::error_category {
public:
    char const* name() const noexcept override { return "attestation"; }
    std::string message(int value) const override { return kind_name(static_cast<attest_errc>(value)); }
};
} // namespace

boost::system::error_category const& attest_category() noexcept {
    static category const instance;
    return instance;
}

} // namespace mirror::attest
