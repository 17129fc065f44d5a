// Cutting outside text without splitting a character, and making it valid UTF-8.

#include "core/io/text.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace mirror;

TEST_CASE("utf8_prefix cuts between characters, never inside one") {
    std::string const a_umlaut = "\xc3\xa4";      // ä, 2 bytes
    std::string const euro = "\xe2\x82\xac";      // €, 3 bytes
    std::string const emoji = "\xf0\x9f\x98\x80"; // 😀, 4 bytes
    CHECK(io::utf8_prefix("short", 300) == "short");
    CHECK(io::utf8_prefix(std::string(299, 'x') + a_umlaut, 300) == std::string(299, 'x'));
    CHECK(io::utf8_prefix(std::string(298, 'x') + a_umlaut, 300) == std::string(298, 'x') + a_umlaut);
    for (std::size_t before = 0; before < 4; ++before) {
        CAPTURE(before);
        for (std::string const& c : {a_umlaut, euro, emoji}) {
            std::string text = std::string(before, 'x') + c + "tail";
            for (std::size_t limit = before; limit < before + c.size(); ++limit)
                CHECK(io::utf8_prefix(text, limit) == std::string(before, 'x'));
            CHECK(io::utf8_prefix(text, before + c.size()) == std::string(before, 'x') + c);
        }
    }
    // Bytes that are not UTF-8 are cut where the limit falls.
    CHECK(io::utf8_prefix("ab\x80\x80\x80\x80\x80", 4) == "ab\x80\x80");
    CHECK(io::utf8_prefix("\xff\xfe\xfd", 2) == "\xff\xfe");
}

TEST_CASE("valid_utf8 keeps characters and replaces each stray byte with U+FFFD") {
    std::string const replacement = "\xef\xbf\xbd";
    CHECK(io::valid_utf8("plain ä € 😀") == "plain ä € 😀");
    CHECK(io::valid_utf8("a\xc3") == "a" + replacement);                              // a character cut off
    CHECK(io::valid_utf8("\xc0\xaf") == replacement + replacement);                   // an overlong '/'
    CHECK(io::valid_utf8("\xed\xa0\x80") == replacement + replacement + replacement); // a surrogate
    CHECK(io::valid_utf8("x\xffy") == "x" + replacement + "y");
    CHECK(io::valid_utf8("") == "");
}
