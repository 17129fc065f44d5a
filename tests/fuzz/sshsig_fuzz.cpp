// libFuzzer target: SSHSIG signatures (verify/sshsig.hpp), the armor and the wire format,
// as an origin serves them in version.json.sig. Each input is tried as armored text and as
// a dearmored blob, and verified over the message the seeds were signed over (with
// ssh-keygen -Y sign -n fdl), so mutations of real signatures reach libssh's and
// OpenSSL's checks. Besides the sanitizers: the armor reads back what it wraps, and a
// signature that verifies binds its message and its namespace.

#include "verify/errors.hpp"
#include "verify/ssh_wire.hpp"
#include "verify/sshsig.hpp"
#include "tests/fuzz/support/check.hpp"

using namespace mirror;
using namespace mirror::verify;
using mirror::fuzz::check;

namespace {

/// What every seed in corpus/sshsig signs (tests/fuzz/corpus/README.md says how).
constexpr std::string_view message = "fdl fuzz message\n";

void check_parsed(result<sshsig> const& parsed) {
    if (!parsed)
        return;
    check(parse_public_key_blob(parsed->key.blob).has_value(), "a signature's key that is not a key");
    check(parsed->hash_algorithm == "sha256" || parsed->hash_algorithm == "sha512", "a hash SSHSIG does not allow");
    if (parsed->certificate)
        check(parsed->certificate->key == parsed->key, "a certificate's signature names another key");
}

void check_armored(std::string_view text) {
    auto blob = dearmor(text);
    if (!blob) {
        check(blob.error().code == verify_errc::malformed_armor || blob.error().code == verify_errc::too_large,
              "armor refused with another code", blob.error().message);
        return;
    }
    // Our armor of the blob (as ssh-keygen writes it) reads back as the same blob.
    auto again = dearmor("-----BEGIN SSH SIGNATURE-----\n" + base64_encode(*blob) + "\n-----END SSH SIGNATURE-----\n");
    check(again.has_value() && *again == *blob, "re-armored blob reads back different");
    check_parsed(parse_sshsig(*blob));

    auto verified = verify_sshsig(text, message, "fdl");
    if (!verified)
        return;
    check(verified->ns == "fdl", "a signature verified for another namespace", verified->ns);
    check(verified->blob == *blob, "the verified blob is not the dearmored one");
    check(!verify_sshsig(text, "another message\n", "fdl"), "a signature verifies over another message");
    check(!verify_sshsig(text, message, "fdx"), "a signature verifies for another namespace");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(unsigned char const* data, std::size_t size) {
    auto text = mirror::fuzz::as_text(data, size);
    check_armored(text);
    check_parsed(parse_sshsig(text));
    return 0;
}
