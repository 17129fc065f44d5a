// Hostile input for the signature code: thousands of mutations of a real ssh-keygen
// signature (armored and dearmored) and of an allowed_signers file must each be refused
// or accepted cleanly, never crash; a mutated signature must never verify. CI runs this
// under AddressSanitizer and UBSan too.

#include "verify/sshsig.hpp"
#include <doctest/doctest.h>

#include "tests/support/publisher.hpp"
#include "tests/support/temp_dir.hpp"
#include "verify/allowed_signers.hpp"
#include "verify/ssh_wire.hpp"

#include <cstdlib>
#include <random>

using namespace mirror;
using namespace mirror::verify;
using namespace mirror::test;

namespace {

std::string mutate(std::string text, std::mt19937& random) {
    auto pick = [&](std::size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(random); };
    int edits = 1 + static_cast<int>(pick(3));
    for (int i = 0; i < edits && !text.empty(); ++i) {
        std::size_t at = pick(text.size());
        switch (pick(4)) {
        case 0: text[at] = static_cast<char>(text[at] ^ (1 << pick(8))); break; // one bit
        case 1: text[at] = static_cast<char>(pick(256)); break;
        case 2: text.erase(at, 1 + pick(4)); break;
        default: text.insert(at, 1, static_cast<char>(pick(256))); break;
        }
    }
    return text;
}

} // namespace

TEST_CASE("mutated signatures are refused cleanly, and none verifies") {
    temp_dir tmp;
    auto key = make_ssh_key(tmp.path(), "k");
    write_file(tmp / "msg", "{\"fdl\":\"0.1\"}\n");
    std::string sign = "ssh-keygen -Y sign -q -f '" + key.string() + "' -n fdl '" + (tmp / "msg").string() + "'";
    REQUIRE(std::system(sign.c_str()) == 0);
    std::string const armored = read_file(tmp.path().string() + "/msg.sig");
    std::string const message = "{\"fdl\":\"0.1\"}\n";
    REQUIRE(verify_sshsig(armored, message, "fdl").has_value());
    auto blob = dearmor(armored);
    REQUIRE(blob.has_value());

    std::mt19937 random(2026);
    int accepted = 0;
    for (int i = 0; i < 2000; ++i) {
        // The armored text: whitespace and text after END aside, a change must not verify.
        auto text = mutate(armored, random);
        if (verify_sshsig(text, message, "fdl"))
            ++accepted;
        // The blob itself, re-armored: every byte of it matters except the reserved field.
        auto bytes = mutate(*blob, random);
        auto parsed = parse_sshsig(bytes);
        if (!parsed)
            REQUIRE(!parsed.error().message.empty());
        std::string rearmored = "-----BEGIN SSH SIGNATURE-----\n" + base64_encode(bytes) + "\n-----END SSH SIGNATURE-----\n";
        auto verified = verify_sshsig(rearmored, message, "fdl");
        if (verified) {
            // Only the reserved field is outside what is signed: a mutation there may verify,
            // and then it is still the same key that signed.
            CHECK(verified->key == verify_sshsig(armored, message, "fdl")->key);
            CHECK(verified->ns == "fdl");
        }
    }
    // Mutations that only touch whitespace or the text after END may verify; they are few.
    CHECK(accepted < 200);
}

TEST_CASE("mutated allowed_signers files are parsed or refused with file and line") {
    temp_dir tmp;
    auto key = make_ssh_key(tmp.path(), "k");
    std::string const valid = "# keys\n" + allowed_line("alice@example.org,*@x", key) + "\n" +
                              allowed_line("bob@example.org", key, "namespaces=\"fdl\",valid-after=\"20240101\"") + "\n";
    REQUIRE(parse_allowed_signers(valid, "a").has_value());
    std::mt19937 random(7);
    for (int i = 0; i < 3000; ++i) {
        auto text = mutate(valid, random);
        auto parsed = parse_allowed_signers(text, "a");
        if (!parsed) {
            CAPTURE(text);
            REQUIRE(parsed.error().message.starts_with("a:"));
        }
    }
}
