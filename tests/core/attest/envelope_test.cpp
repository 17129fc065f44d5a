// The attestation envelope's parser: what it refuses before any signature is checked.

#include "core/attest/envelope.hpp"
#include "core/attest/errors.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace mirror;

namespace {

/// An envelope of `count` signatures, each of well-formed base64 (not a valid signature).
std::string envelope_with_signatures(std::size_t count) {
    std::string text = R"({"payloadType":"application/vnd.in-toto+json","payload":"e30=","signatures":[)";
    for (std::size_t i = 0; i < count; ++i)
        text += std::string(i == 0 ? "" : ",") + R"({"keyid":"SHA256:x","sig":"AAAA"})";
    return text + "]}";
}

} // namespace

TEST_CASE("an envelope carries at most 16 signatures: each costs its consumer a verification") {
    auto sixteen = attest::parse_envelope(envelope_with_signatures(16));
    REQUIRE(sixteen.has_value());
    CHECK(sixteen->signatures.size() == 16);

    auto seventeen = attest::parse_envelope(envelope_with_signatures(17));
    REQUIRE_FALSE(seventeen.has_value());
    CHECK(seventeen.error().code == attest::attest_errc::malformed);
    CHECK(seventeen.error().message == "attestation envelope: signatures: 17, more than the 16 an envelope may carry");

    // 200,000 (22 s of a consumer's CPU once): refused before any is checked, here by the
    // memory its tree would take past its text.
    auto many = attest::parse_envelope(envelope_with_signatures(200'000));
    REQUIRE_FALSE(many.has_value());
    CHECK(many.error().code == attest::attest_errc::malformed);
}
