#include "verify/sha256.hpp"
#include <doctest/doctest.h>

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

using namespace mirror::verify;

namespace {

// FIPS 180-2 / NIST CSRC example vectors.
constexpr char const* empty_digest = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr char const* abc_digest = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
constexpr char const* two_block_text = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
constexpr char const* two_block_digest = "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1";
constexpr char const* million_a_digest = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";

} // namespace

TEST_CASE("sha256_of matches the published test vectors") {
    CHECK(to_hex(sha256_of("")) == empty_digest);
    CHECK(to_hex(sha256_of("abc")) == abc_digest);
    CHECK(to_hex(sha256_of(two_block_text)) == two_block_digest);
    CHECK(to_hex(sha256_of(std::string(1'000'000, 'a'))) == million_a_digest);
}

TEST_CASE("a hasher with nothing fed gives the digest of the empty string") {
    sha256_hasher hasher;
    CHECK(to_hex(hasher.finish()) == empty_digest);
}

TEST_CASE("incremental hashing equals one-shot hashing, whatever the chunking") {
    std::string const text(1'000'000, 'a');
    for (std::size_t chunk : {std::size_t{1}, std::size_t{3}, std::size_t{63}, std::size_t{64}, std::size_t{65},
                              std::size_t{4096}, std::size_t{999'999}}) {
        CAPTURE(chunk);
        sha256_hasher hasher;
        if (chunk == 1) {
            // Byte by byte over a shorter text: a million calls is needlessly slow.
            for (char c : std::string_view(two_block_text))
                hasher.update(std::string_view(&c, 1));
            CHECK(to_hex(hasher.finish()) == two_block_digest);
            continue;
        }
        for (std::size_t at = 0; at < text.size(); at += chunk)
            hasher.update(std::string_view(text).substr(at, chunk));
        CHECK(to_hex(hasher.finish()) == million_a_digest);
    }
}

TEST_CASE("the byte-span overload hashes the same bytes as the text overload") {
    std::string const text = "abc";
    auto bytes = std::as_bytes(std::span(text.data(), text.size()));
    sha256_hasher hasher;
    hasher.update(bytes.first(1));
    hasher.update(std::string_view("b"));
    hasher.update(bytes.subspan(2));
    CHECK(to_hex(hasher.finish()) == abc_digest);
}

TEST_CASE("finish resets the hasher so it can be fed again") {
    sha256_hasher hasher;
    hasher.update("abc");
    CHECK(to_hex(hasher.finish()) == abc_digest);
    // A fresh message, not "abc" continued.
    CHECK(to_hex(hasher.finish()) == empty_digest);
    hasher.update("a");
    hasher.update("bc");
    CHECK(to_hex(hasher.finish()) == abc_digest);
}

TEST_CASE("a moved-to hasher carries on with the state it took over") {
    sha256_hasher first;
    first.update("ab");
    sha256_hasher second(std::move(first));
    second.update("c");
    CHECK(to_hex(second.finish()) == abc_digest);

    sha256_hasher third;
    third.update("unrelated");
    third = std::move(second);
    third.update("abc");
    CHECK(to_hex(third.finish()) == abc_digest);
}

TEST_CASE("to_hex writes 64 lower-case digits, high nibble first") {
    sha256_digest digest{};
    digest[0] = 0xab;
    digest[1] = 0x0f;
    digest[31] = 0xf0;
    std::string const hex = to_hex(digest);
    CHECK(hex.size() == 64);
    CHECK(hex.substr(0, 4) == "ab0f");
    CHECK(hex.substr(60) == "00f0");
    CHECK(hex.find_first_not_of("0123456789abcdef") == std::string::npos);
}

TEST_CASE("parse_sha256_hex inverts to_hex") {
    for (auto const* text : {"", "abc", two_block_text}) {
        auto digest = sha256_of(text);
        auto parsed = parse_sha256_hex(to_hex(digest));
        REQUIRE(parsed.has_value());
        CHECK(*parsed == digest);
    }
    sha256_digest all_bytes{};
    for (std::size_t i = 0; i < all_bytes.size(); ++i)
        all_bytes[i] = static_cast<std::uint8_t>(i * 8 + 7); // covers every nibble value
    auto parsed = parse_sha256_hex(to_hex(all_bytes));
    REQUIRE(parsed.has_value());
    CHECK(*parsed == all_bytes);
}

TEST_CASE("parse_sha256_hex reads the bytes in order") {
    std::string text(64, '0');
    text[0] = 'f';
    text[1] = '1';
    text[63] = 'a';
    auto parsed = parse_sha256_hex(text);
    REQUIRE(parsed.has_value());
    CHECK((*parsed)[0] == 0xf1);
    CHECK((*parsed)[31] == 0x0a);
    CHECK((*parsed)[15] == 0x00);
}

TEST_CASE("parse_sha256_hex refuses anything but 64 lower-case hex digits") {
    std::string const good = abc_digest;
    REQUIRE(parse_sha256_hex(good).has_value());

    std::string upper = good;
    for (auto& c : upper)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    CHECK_FALSE(parse_sha256_hex(upper).has_value());

    std::string one_upper = good;
    one_upper[0] = 'B'; // "ba…" -> "Ba…"
    CHECK_FALSE(parse_sha256_hex(one_upper).has_value());

    CHECK_FALSE(parse_sha256_hex(good.substr(0, 63)).has_value());
    CHECK_FALSE(parse_sha256_hex(good + "0").has_value());
    CHECK_FALSE(parse_sha256_hex("").has_value());

    for (char bad : {'g', 'x', ' ', '-', ':', '\0'}) {
        CAPTURE(static_cast<int>(bad));
        std::string text = good;
        text[17] = bad;
        CHECK_FALSE(parse_sha256_hex(text).has_value());
    }
    // A prefix sometimes written by tools.
    CHECK_FALSE(parse_sha256_hex("sha256:" + good.substr(0, 57)).has_value());
}
