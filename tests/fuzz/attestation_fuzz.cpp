// libFuzzer target: a mirror's attestation as a consumer reads it from a mirror it does not
// trust (core/attest): the DSSE envelope, the in-toto statement it carries, and the
// statement alone. Besides the sanitizers, it checks what the readers promise: a refusal is
// attest_errc::malformed; a statement accepted renders and reads back the same; and no
// envelope opens without a trusted key (an empty allowed_signers trusts none).

#include "core/attest/envelope.hpp"
#include "core/attest/errors.hpp"
#include "core/attest/statement.hpp"
#include "tests/fuzz/support/check.hpp"

using namespace mirror;
using mirror::fuzz::check;

namespace {

void statement_round_trip(std::string_view text) {
    auto statement = attest::parse_statement(text);
    if (!statement) {
        check(statement.error().code == attest::attest_errc::malformed, "a statement refused as other than malformed",
              statement.error().message);
        return;
    }
    auto again = attest::parse_statement(attest::render_statement(*statement));
    check(again.has_value(), "a statement accepted does not read back once rendered");
    check(*again == *statement, "a statement reads back other than rendered");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(unsigned char const* data, std::size_t size) {
    auto const text = fuzz::as_text(data, size);
    statement_round_trip(text);
    auto envelope = attest::parse_envelope(text);
    if (!envelope) {
        check(envelope.error().code == attest::attest_errc::malformed, "an envelope refused as other than malformed",
              envelope.error().message);
    } else {
        statement_round_trip(envelope->payload);
        auto rendered = attest::parse_envelope(attest::render_envelope(*envelope));
        check(rendered.has_value() && rendered->payload == envelope->payload &&
                  rendered->signatures.size() == envelope->signatures.size(),
              "an envelope reads back other than rendered");
    }
    verify::allowed_signers nobody;
    auto opened = attest::open_envelope(text, nobody, attest::default_namespace, 0);
    check(!opened, "an envelope opened with no key trusted");
    return 0;
}
