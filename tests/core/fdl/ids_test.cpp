#include "core/fdl/ids.hpp"
#include <doctest/doctest.h>

#include <string>

using namespace mirror::fdl;

namespace {

// The spec's own examples (spec/versions.en.md): version nibble '7' at index 14,
// variant nibble at index 19.
constexpr char const* spec_id = "019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c";
constexpr char const* spec_parent = "019a2f10-0c4d-7e88-a1b2-55c0d9e3f7aa";

std::string with_char(std::string text, std::size_t at, char c) {
    text[at] = c;
    return text;
}

} // namespace

TEST_CASE("the spec's version ids are accepted") {
    CHECK(is_version_id(spec_id));
    CHECK(is_version_id(spec_parent));
    CHECK(is_lower_uuid(spec_id));
}

TEST_CASE("every RFC 9562 variant nibble is accepted, and nothing else") {
    for (char variant : {'8', '9', 'a', 'b'}) {
        CAPTURE(variant);
        CHECK(is_version_id(with_char(spec_id, 19, variant)));
    }
    for (char variant : {'0', '1', '7', 'c', 'd', 'e', 'f'}) {
        CAPTURE(variant);
        auto text = with_char(spec_id, 19, variant);
        CHECK(is_lower_uuid(text)); // still a UUID
        CHECK_FALSE(is_version_id(text));
    }
}

TEST_CASE("a version nibble other than 7 is refused as a version id but is still a UUID") {
    for (char version : {'0', '1', '4', '6', '8', 'f'}) {
        CAPTURE(version);
        auto text = with_char(spec_id, 14, version);
        CHECK(is_lower_uuid(text));
        CHECK_FALSE(is_version_id(text));
    }
    // A real UUIDv4.
    CHECK(is_lower_uuid("550e8400-e29b-41d4-a716-446655440000"));
    CHECK_FALSE(is_version_id("550e8400-e29b-41d4-a716-446655440000"));
    // '7' somewhere else does not make it version 7.
    CHECK_FALSE(is_version_id("77777777-7777-4777-8777-777777777777"));
}

TEST_CASE("upper case is refused, even a single digit") {
    CHECK_FALSE(is_version_id("019A3C4E-7B21-7F3A-9C55-2F0D8E1A4B6C"));
    CHECK_FALSE(is_lower_uuid("019A3C4E-7B21-7F3A-9C55-2F0D8E1A4B6C"));
    CHECK_FALSE(is_version_id(with_char(spec_id, 2, 'A')));  // "019a" -> "01A…"
    CHECK_FALSE(is_version_id(with_char(spec_id, 35, 'C'))); // last digit
    CHECK_FALSE(is_version_id(with_char(spec_id, 19, 'B'))); // variant in upper case
}

TEST_CASE("dashes must be present and in the 8-4-4-4-12 places") {
    CHECK_FALSE(is_version_id("019a3c4e7b217f3a9c552f0d8e1a4b6c"));
    CHECK_FALSE(is_lower_uuid("019a3c4e7b217f3a9c552f0d8e1a4b6c"));
    CHECK_FALSE(is_version_id("{019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c}"));
    for (std::size_t dash : {8u, 13u, 18u, 23u}) {
        CAPTURE(dash);
        CHECK_FALSE(is_version_id(with_char(spec_id, dash, '0')));
        CHECK_FALSE(is_lower_uuid(with_char(spec_id, dash, '_')));
    }
    // Right length, a dash moved by one place.
    std::string moved = spec_id;
    std::swap(moved[8], moved[9]);
    CHECK(moved.size() == 36);
    CHECK_FALSE(is_lower_uuid(moved));
    CHECK_FALSE(is_version_id(moved));
}

TEST_CASE("the length must be exactly 36") {
    std::string const id = spec_id;
    CHECK_FALSE(is_version_id(""));
    CHECK_FALSE(is_version_id(id.substr(0, 35)));
    CHECK_FALSE(is_version_id(id + "0"));
    CHECK_FALSE(is_version_id(id + "\n")); // a ref file's newline is the caller's to strip
    CHECK_FALSE(is_version_id(" " + id));
    CHECK_FALSE(is_lower_uuid(id.substr(0, 35)));
    CHECK_FALSE(is_lower_uuid(id + "a"));
}

TEST_CASE("non-hex characters are refused") {
    for (char bad : {'g', 'z', ' ', '-', '.', '\0'}) {
        CAPTURE(static_cast<int>(bad));
        CHECK_FALSE(is_version_id(with_char(spec_id, 0, bad)));
        CHECK_FALSE(is_version_id(with_char(spec_id, 30, bad)));
        CHECK_FALSE(is_lower_uuid(with_char(spec_id, 30, bad)));
    }
}
