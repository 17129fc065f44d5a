#include "verify/ssh_wire.hpp"
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <utility>
#include <string_view>

using namespace mirror::verify;
using namespace std::string_literals;

// Expected values come from RFC 4251 section 5 (uint32 big-endian, string = uint32 length +
// bytes), RFC 4648 section 10 (base64 test vectors) and OpenSSH's b64_pton rules.

TEST_CASE("wire_reader reads big-endian uint32 values and stops at the end") {
    std::string const in_bytes = "\x01\x02\x03\x04\xff\xff\xff\xfe\x00\x00\x00"s; // owned: the reader keeps a view
    wire_reader in(in_bytes);
    CHECK(in.u32() == 0x01020304u);
    CHECK(in.u32() == 0xfffffffeu);
    CHECK_FALSE(in.empty());
    CHECK_FALSE(in.u32().has_value()); // three bytes left
    wire_reader none("");
    CHECK(none.empty());
    CHECK_FALSE(none.u32().has_value());
}

TEST_CASE("wire_reader reads length-prefixed strings") {
    std::string const in_bytes = "\x00\x00\x00\x03" "abc" "\x00\x00\x00\x00" "\x00\x00\x00\x02" "\x00\xff"s;
    wire_reader in(in_bytes);
    CHECK(in.string() == std::string_view("abc"));
    auto empty = in.string();
    REQUIRE(empty.has_value());
    CHECK(empty->empty());
    CHECK(in.string() == std::string_view("\x00\xff", 2));
    CHECK(in.empty());
    CHECK_FALSE(in.string().has_value());
}

TEST_CASE("wire_reader refuses a string whose length runs past the end") {
    SUBCASE("one byte short") {
        std::string const in_bytes = "\x00\x00\x00\x04" "abc"s;
        wire_reader in(in_bytes);
        CHECK_FALSE(in.string().has_value());
    }
    SUBCASE("a length field cut short") {
        std::string const in_bytes = "\x00\x00\x03"s;
        wire_reader in(in_bytes);
        CHECK_FALSE(in.string().has_value());
    }
    SUBCASE("length 0xffffffff") {
        std::string const in_bytes = "\xff\xff\xff\xff" "abcdef"s;
        wire_reader in(in_bytes);
        CHECK_FALSE(in.string().has_value());
    }
    SUBCASE("length 0x80000000 and 0xfffffffc") {
        std::string const a_bytes = "\x80\x00\x00\x00" "abcd"s;
        wire_reader a(a_bytes);
        CHECK_FALSE(a.string().has_value());
        std::string const b_bytes = "\xff\xff\xff\xfc" "abcd"s;
        wire_reader b(b_bytes);
        CHECK_FALSE(b.string().has_value());
    }
    SUBCASE("never reads the bytes that follow the view") {
        // The buffer holds the whole string, the view only its first six bytes.
        std::string const buffer = "\x00\x00\x00\x04" "abcd"s;
        wire_reader in(std::string_view(buffer).substr(0, 6));
        CHECK_FALSE(in.string().has_value());
        wire_reader huge(std::string_view("\xff\xff\xff\xff" "abcdefgh", 12).substr(0, 8));
        CHECK_FALSE(huge.string().has_value());
    }
}

TEST_CASE("wire_reader::cstring drops one trailing NUL and refuses any other, as sshbuf_get_cstring") {
    for (auto [field, expected] : {std::pair{"fdl"s, std::optional<std::string>("fdl")},
                                   std::pair{"fdl\0"s, std::optional<std::string>("fdl")},
                                   std::pair{"\0"s, std::optional<std::string>("")},
                                   std::pair{""s, std::optional<std::string>("")},
                                   std::pair{"fdl\0\0"s, std::optional<std::string>()},
                                   std::pair{"fd\0l"s, std::optional<std::string>()}}) {
        CAPTURE(field);
        std::string const bytes = wire_string(field) + "next"s;
        wire_reader in(bytes);
        auto got = in.cstring();
        CHECK(got.has_value() == expected.has_value());
        if (got && expected)
            CHECK(std::string(*got) == *expected);
        if (!got) // a refused field is not consumed
            CHECK(in.string() == std::string_view(field));
    }
}

TEST_CASE("wire_reader::unsigned_mpint skips leading zeros, refuses a negative or over-long one") {
    auto read = [](std::string const& field) {
        std::string const bytes = wire_string(field);
        wire_reader in(bytes);
        auto got = in.unsigned_mpint();
        return got ? std::optional<std::string>(std::string(*got)) : std::nullopt;
    };
    CHECK(read("\x01\x02"s) == "\x01\x02"s);
    CHECK(read("\x00\x80"s) == "\x80"s);
    CHECK(read("\x00\x00\x00\x05"s) == "\x05"s);
    CHECK(read(""s) == ""s);          // zero
    CHECK(read("\x00"s) == ""s);      // zero, with a zero byte
    CHECK(read("\x80"s) == std::nullopt); // negative
    CHECK(read(std::string(2048, '\0') + "\x01"s) == "\x01"s); // 2049 bytes: the limit
    CHECK(read(std::string(2049, '\0') + "\x01"s) == std::nullopt);
    CHECK(wire_mpint("\x80"s) == "\x00\x00\x00\x02\x00\x80"s);
    CHECK(wire_mpint("\x7f"s) == "\x00\x00\x00\x01\x7f"s);
}

TEST_CASE("wire_reader::bytes takes exactly the count asked for") {
    wire_reader in("abcdef");
    CHECK(in.bytes(0) == std::string_view(""));
    CHECK(in.bytes(2) == std::string_view("ab"));
    CHECK_FALSE(in.bytes(5).has_value());
    CHECK_FALSE(in.bytes(static_cast<std::size_t>(-1)).has_value());
    CHECK(in.bytes(4) == std::string_view("cdef"));
    CHECK(in.empty());
}

TEST_CASE("base64_encode gives the RFC 4648 test vectors") {
    CHECK(base64_encode("") == "");
    CHECK(base64_encode("f") == "Zg==");
    CHECK(base64_encode("fo") == "Zm8=");
    CHECK(base64_encode("foo") == "Zm9v");
    CHECK(base64_encode("foob") == "Zm9vYg==");
    CHECK(base64_encode("fooba") == "Zm9vYmE=");
    CHECK(base64_encode("foobar") == "Zm9vYmFy");
    CHECK(base64_encode("\xfb\xff\xbf"s) == "+/+/");
    CHECK(base64_encode("\x00\x00\x00"s) == "AAAA");
}

TEST_CASE("base64_decode gives the RFC 4648 test vectors") {
    CHECK(base64_decode("") == ""s);
    CHECK(base64_decode("Zg==") == "f"s);
    CHECK(base64_decode("Zm8=") == "fo"s);
    CHECK(base64_decode("Zm9v") == "foo"s);
    CHECK(base64_decode("Zm9vYg==") == "foob"s);
    CHECK(base64_decode("Zm9vYmE=") == "fooba"s);
    CHECK(base64_decode("Zm9vYmFy") == "foobar"s);
    CHECK(base64_decode("+/+/") == "\xfb\xff\xbf"s);
}

TEST_CASE("base64 round-trips every length from 0 to 40") {
    for (std::size_t length = 0; length <= 40; ++length) {
        CAPTURE(length);
        std::string bytes;
        for (std::size_t i = 0; i < length; ++i)
            bytes += static_cast<char>((i * 97 + length * 31 + 255) & 0xff); // all byte values in play
        std::string text = base64_encode(bytes);
        CHECK(text.size() == (length + 2) / 3 * 4);
        CHECK(text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") ==
              std::string::npos);
        CHECK(base64_decode(text) == bytes);
    }
    std::string all;
    for (int c = 0; c < 256; ++c)
        all += static_cast<char>(c);
    CHECK(base64_decode(base64_encode(all)) == all);
}

TEST_CASE("base64_decode skips whitespace") {
    CHECK(base64_decode("Zm9v\nYmFy") == "foobar"s);
    CHECK(base64_decode(" Zm 9v\tYg==\r\n") == "foob"s);
    CHECK(base64_decode("Z\nm\n9\nv\n") == "foo"s);
    CHECK(base64_decode("Zg= =") == "f"s); // b64_pton skips spaces between the two '='
    CHECK(base64_decode("  \n\t") == ""s);
}

TEST_CASE("base64_decode refuses characters outside the alphabet") {
    CHECK_FALSE(base64_decode("Zm9v!").has_value());
    CHECK_FALSE(base64_decode("Zm9-").has_value()); // the URL-safe alphabet is not base64
    CHECK_FALSE(base64_decode("Zm9_").has_value());
    CHECK_FALSE(base64_decode("Zm9v\x00YmFy"s).has_value());
    CHECK_FALSE(base64_decode("Zm9v\xc3\xa9").has_value());
    CHECK_FALSE(base64_decode("Zm.v").has_value());
}

TEST_CASE("base64_decode refuses a misplaced '='") {
    CHECK_FALSE(base64_decode("=").has_value());
    CHECK_FALSE(base64_decode("==").has_value());
    CHECK_FALSE(base64_decode("====").has_value());
    CHECK_FALSE(base64_decode("=Zm9").has_value());
    CHECK_FALSE(base64_decode("Z=m9").has_value());
    CHECK_FALSE(base64_decode("Zm=9").has_value());
    CHECK_FALSE(base64_decode("Zm9v=").has_value());
    CHECK_FALSE(base64_decode("Zg===").has_value());
    CHECK_FALSE(base64_decode("Zm8==").has_value());
}

TEST_CASE("base64_decode refuses data after the padding") {
    CHECK_FALSE(base64_decode("Zg==Zm9v").has_value());
    CHECK_FALSE(base64_decode("Zm8=Zm9v").has_value());
    CHECK_FALSE(base64_decode("Zg==A").has_value());
    CHECK_FALSE(base64_decode("Zm8=\nA").has_value());
}

TEST_CASE("base64_decode refuses a partial group without padding") {
    CHECK_FALSE(base64_decode("Z").has_value());
    CHECK_FALSE(base64_decode("Zg").has_value());
    CHECK_FALSE(base64_decode("Zm8").has_value());
    CHECK_FALSE(base64_decode("Zm9vY").has_value());
    CHECK_FALSE(base64_decode("Zm9vYg").has_value());
    CHECK_FALSE(base64_decode("Zm9vYmE").has_value());
    CHECK_FALSE(base64_decode("Zg=").has_value()); // one '=' where two are needed
}

TEST_CASE("base64_decode refuses non-zero bits past the last byte") {
    CHECK_FALSE(base64_decode("QR==").has_value()); // 'A' is "QQ=="
    CHECK_FALSE(base64_decode("Zh==").has_value()); // 'f' is "Zg=="
    CHECK_FALSE(base64_decode("Zm9=").has_value()); // "fo" is "Zm8="
    CHECK_FALSE(base64_decode("QUF=").has_value()); // "AA" is "QUE="
    CHECK(base64_decode("QQ==") == "A"s);
    CHECK(base64_decode("QUE=") == "AA"s);
}
