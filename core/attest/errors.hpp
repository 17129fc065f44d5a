#pragma once
// Why a mirror's attestation is refused, as a consumer's check reports it
// ("attestation.stale"): each failure class answers one threat (docs/attestations.md).

#include <boost/system/error_code.hpp>

#include <type_traits>

namespace mirror::attest {

enum class attest_errc {
    missing = 1,   ///< the mirror holds no attestation
    malformed,     ///< not a DSSE envelope of an in-toto statement this version reads
    bad_signature, ///< no signature verifies over the envelope's pre-authentication encoding
    untrusted_key, ///< a signature verifies, by a key the consumer's file does not trust (now)
    expired,       ///< past the `expires` its signer gave it: nobody kept the mirror verified
    stale,         ///< older than the consumer's --max-age: replayed, or the mirror frozen
    mismatch,      ///< the mirror holds something other than what was attested (named)
    too_large,     ///< larger than this process's memory limit lets it read (named, with the limit)
};

boost::system::error_category const& attest_category() noexcept;

inline boost::system::error_code make_error_code(attest_errc e) noexcept {
    return {static_cast<int>(e), attest_category()};
}

/// "missing", "bad_signature"…: with the category, "attestation.missing".
char const* kind_name(attest_errc e) noexcept;

} // namespace mirror::attest

template <>
struct boost::system::is_error_code_enum<mirror::attest::attest_errc> : std::true_type {};
