// libFuzzer target: OpenSSH certificates (verify/ssh_cert.hpp), as the key blob of an
// SSHSIG or of an allowed_signers line. Besides the sanitizers: an accepted certificate's
// keys are keys parse_public_key_blob accepts, what the CA signed is the blob up to its
// signature, and check_certificate_authority accepts only what OpenSSH would.

#include "verify/ssh_cert.hpp"
#include "tests/fuzz/support/check.hpp"

#include <algorithm>

using namespace mirror::verify;
using mirror::fuzz::check;

namespace {

/// The times the certificate is checked at: inside the window of the seeds (made with
/// ssh-keygen -V), and the extremes.
constexpr std::int64_t times[] = {1'800'000'000, 0, -1, INT64_MAX};

void check_authority(ssh_certificate const& cert, std::string_view principal, std::int64_t now) {
    if (!check_certificate_authority(cert, principal, now))
        return;
    auto when = static_cast<std::uint64_t>(now < 0 ? 0 : now);
    check(cert.type == 1, "a host certificate accepted as a user's");
    check(cert.valid_after <= when && when < cert.valid_before, "a certificate accepted outside its window");
    check(cert.critical_options.empty(), "a certificate with a critical option accepted");
    check(std::find(cert.principals.begin(), cert.principals.end(), principal) != cert.principals.end(),
          "a certificate accepted for a principal it does not name", principal);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(unsigned char const* data, std::size_t size) {
    auto blob = mirror::fuzz::as_text(data, size);
    auto cert = parse_certificate(blob);
    if (!cert)
        return 0;
    check(parse_public_key_blob(cert->key.blob).has_value(), "a certified key that is not a key");
    check(parse_public_key_blob(cert->ca.blob).has_value(), "a CA key that is not a key");
    check(blob.starts_with(cert->signed_part), "the signed part is not the start of the blob");
    check(blob.size() >= cert->signed_part.size() + 4 + cert->signature.size() &&
              blob.ends_with(cert->signature),
          "the CA's signature is not the blob's last field");
    // The CA's signature: the seeds carry real ones, so mutations reach OpenSSL's checks.
    (void)check_certificate_signature(*cert);
    for (auto now : times) {
        check_authority(*cert, cert->principals.empty() ? "" : cert->principals.front(), now);
        check_authority(*cert, "mallory", now);
    }
    return 0;
}
