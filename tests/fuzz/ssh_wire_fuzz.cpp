// libFuzzer target: the SSH wire encoding and base64 (verify/ssh_wire.hpp), under every
// key, certificate and signature this build reads. Besides the sanitizers: base64 that
// decodes is canonical (encoding the bytes gives the text back, whitespace aside), and the
// wire reader never reads past its input nor loses bytes.

#include "verify/ssh_wire.hpp"
#include "tests/fuzz/support/check.hpp"

using namespace mirror::verify;
using mirror::fuzz::check;

namespace {

void check_base64(std::string_view text) {
    auto decoded = base64_decode(text);
    if (!decoded) {
        // Standard base64 of any bytes decodes: a refusal is only for text no encoder writes.
        return;
    }
    std::string compact;
    for (char c : text)
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n')
            compact += c;
    check(base64_encode(*decoded) == compact, "decoded base64 is not canonical", text);
}

void check_encode(std::string_view bytes) {
    auto encoded = base64_encode(bytes);
    check(encoded.size() == (bytes.size() + 2) / 3 * 4, "base64 of the wrong length");
    auto decoded = base64_decode(encoded);
    check(decoded.has_value() && *decoded == bytes, "encoded bytes do not decode back");
}

/// Reads the input as a sequence of fields: each step takes a u32 or a string (chosen by
/// the bytes themselves), and everything read must add up to the input.
void check_reader(std::string_view bytes) {
    wire_reader in(bytes);
    std::size_t consumed = 0;
    for (int step = 0; !in.empty() && step < 64; ++step) {
        std::size_t left = bytes.size() - consumed;
        if (step % 3 == 2) {
            auto n = in.u32();
            if (!n) {
                check(left < 4, "u32 refused with four bytes left");
                break;
            }
            consumed += 4;
            continue;
        }
        auto s = in.string();
        if (!s) {
            // A refused string leaves the reader where it was: the next u32 still reads.
            check(left < 4 || in.bytes(left).has_value(), "a refused string consumed bytes");
            break;
        }
        check(s->size() + 4 <= left, "a string longer than what was left");
        check(s->data() == bytes.data() + consumed + 4, "a string that does not start after its length");
        consumed += 4 + s->size();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(unsigned char const* data, std::size_t size) {
    auto text = mirror::fuzz::as_text(data, size);
    check_base64(text);
    check_encode(text);
    check_reader(text);
    return 0;
}
