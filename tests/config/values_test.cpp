#include "config/values.hpp"
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

using namespace mirror::config;
using namespace std::string_view_literals;

TEST_CASE("the three signature policies are read by their words") {
    CHECK(parse_signature_policy("required") == signature_policy::required);
    CHECK(parse_signature_policy("if-present") == signature_policy::if_present);
    CHECK(parse_signature_policy("off") == signature_policy::off);
}

TEST_CASE("any other spelling of a policy is refused") {
    for (std::string_view text : {""sv, "Required"sv, "REQUIRED"sv, "if_present"sv, "ifpresent"sv, "if present"sv,
                                  " off"sv, "off "sv, "no"sv, "false"sv, "0"sv, "required\n"sv, "off\0"sv}) {
        CAPTURE(text.size());
        CHECK_FALSE(parse_signature_policy(text).has_value());
    }
}

TEST_CASE("to_string writes the word parse_signature_policy reads") {
    for (auto policy : {signature_policy::required, signature_policy::if_present, signature_policy::off}) {
        auto back = parse_signature_policy(to_string(policy));
        REQUIRE(back.has_value());
        CHECK(*back == policy);
    }
    CHECK(to_string(signature_policy::if_present) == "if-present");
}

TEST_CASE("parse_count reads positive decimal counts up to max") {
    CHECK(parse_count("1", 1024) == std::uint64_t{1});
    CHECK(parse_count("16", 1024) == std::uint64_t{16});
    CHECK(parse_count("1024", 1024) == std::uint64_t{1024});
    CHECK(parse_count("007", 1024) == std::uint64_t{7});
    auto constexpr largest = std::numeric_limits<std::uint64_t>::max();
    CHECK(parse_count("18446744073709551615", largest) == largest);
}

TEST_CASE("parse_count refuses zero, signs, junk, values past max and overflow") {
    for (std::string_view text : {"0"sv, "00"sv, "-1"sv, "+1"sv, "-0"sv, ""sv, " 1"sv, "1 "sv, "1x"sv, "x1"sv,
                                  "0x10"sv, "1.0"sv, "1e3"sv, "1,000"sv, "1025"sv, "99999999999"sv,
                                  "18446744073709551616"sv, "99999999999999999999999"sv, "1\0"sv}) {
        CAPTURE(text.size());
        CAPTURE(std::string(text));
        CHECK_FALSE(parse_count(text, 1024).has_value());
    }
    auto constexpr largest = std::numeric_limits<std::uint64_t>::max();
    CHECK_FALSE(parse_count("18446744073709551616", largest).has_value());
    CHECK_FALSE(parse_count("1", 0).has_value());
    CHECK_FALSE(parse_count("5", 4).has_value());
    CHECK(parse_count("4", 4) == std::uint64_t{4});
}
