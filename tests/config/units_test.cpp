#include "config/units.hpp"
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

using namespace mirror::config;
using namespace std::chrono_literals;
using namespace std::string_view_literals;

TEST_CASE("config units: durations in each unit") {
    CHECK(parse_duration("500ms") == 500ms);
    CHECK(parse_duration("30s") == 30s);
    CHECK(parse_duration("5m") == 5min);
    CHECK(parse_duration("1h") == 1h);
    CHECK(parse_duration("2d") == 48h);
    CHECK(parse_duration("0s") == 0ms);
    CHECK(parse_duration("0ms") == 0ms);
    CHECK(parse_duration("90s") == 90s);
    CHECK(parse_duration("007m") == 7min);
}

TEST_CASE("config units: durations combine parts, largest first") {
    CHECK(parse_duration("1h30m") == 90min);
    CHECK(parse_duration("2d12h") == 60h);
    CHECK(parse_duration("1m30s") == 90s);
    CHECK(parse_duration("1s500ms") == 1500ms);
    CHECK(parse_duration("1d2h3m4s5ms") == 24h + 2h + 3min + 4s + 5ms);
    CHECK(parse_duration("1h0m") == 1h);
}

TEST_CASE("config units: durations refused") {
    for (auto text : {""sv,       "5"sv,    "0"sv,
                      "-5m"sv,    "+5m"sv,  "5 m"sv,
                      " 5m"sv,    "5m "sv,  "1.5h"sv,
                      "5M"sv,     "5min"sv, "5sec"sv,
                      "h"sv,      "m5"sv,   "30m1h"sv,
                      "1m1m"sv,   "1s1s"sv, "500ms1s"sv,
                      "1w"sv,     "5mm"sv,  "1h30"sv,
                      "1h 30m"sv, "5ms5"sv, "1e3s"sv,
                      "0x10s"sv,  "5m\0"sv, "99999999999999999999ms"sv}) {
        CAPTURE(std::string(text));
        CHECK_FALSE(parse_duration(text).has_value());
    }
}

TEST_CASE("config units: durations past what milliseconds hold are refused, not wrapped") {
    auto constexpr largest = std::numeric_limits<std::chrono::milliseconds::rep>::max();
    CHECK(parse_duration(std::to_string(largest) + "ms") == std::chrono::milliseconds(largest));
    CHECK_FALSE(parse_duration(std::to_string(largest) + "s").has_value());
    CHECK_FALSE(parse_duration("9223372036854775808ms").has_value());
    CHECK_FALSE(parse_duration("213503982334d").has_value()); // fits 64 bits of ms unsigned, not signed
    CHECK_FALSE(parse_duration("999999999999999999d").has_value());
    CHECK_FALSE(parse_duration("106751991167d23h59m59s999ms1ms").has_value()); // out of order anyway
}

TEST_CASE("config units: format_duration writes what parse_duration reads") {
    CHECK(format_duration(0ms) == "0s");
    CHECK(format_duration(500ms) == "500ms");
    CHECK(format_duration(90min) == "1h30m");
    CHECK(format_duration(1500ms) == "1s500ms");
    CHECK(format_duration(48h) == "2d");
    CHECK(format_duration(-30s) == "-30s");
    for (std::chrono::milliseconds value : {1ms, 999ms, 1000ms, 61000ms, 3599000ms, 3600000ms, 123456789ms})
        CHECK(parse_duration(format_duration(value)) == value);
    CHECK_FALSE(format_duration(std::chrono::milliseconds::min()).empty());
}

TEST_CASE("config units: sizes in bytes, SI and IEC units") {
    CHECK(parse_size("4096") == std::uint64_t{4096});
    CHECK(parse_size("0") == std::uint64_t{0});
    CHECK(parse_size("7B") == std::uint64_t{7});
    CHECK(parse_size("10kB") == std::uint64_t{10'000});
    CHECK(parse_size("100MB") == std::uint64_t{100'000'000});
    CHECK(parse_size("2GB") == std::uint64_t{2'000'000'000});
    CHECK(parse_size("3TB") == std::uint64_t{3'000'000'000'000});
    CHECK(parse_size("512KiB") == std::uint64_t{512} * 1024);
    CHECK(parse_size("64MiB") == std::uint64_t{64} << 20);
    CHECK(parse_size("1GiB") == std::uint64_t{1} << 30);
    CHECK(parse_size("2TiB") == std::uint64_t{2} << 40);
}

TEST_CASE("config units: sizes refused, overflow included") {
    for (auto text : {""sv,
                      "MiB"sv,
                      "-1"sv,
                      "+1"sv,
                      "1.5GiB"sv,
                      "64 MiB"sv,
                      " 64MiB"sv,
                      "64MiB "sv,
                      "64mib"sv,
                      "64MIB"sv,
                      "64KB"sv,
                      "64kb"sv,
                      "64K"sv,
                      "64M"sv,
                      "64Mi"sv,
                      "64b"sv,
                      "64iB"sv,
                      "1PiB"sv,
                      "1e6"sv,
                      "0x40"sv,
                      "64MiB\0"sv,
                      "18446744073709551616"sv,
                      "16777216TiB"sv,
                      "18446744073709552kB"sv}) {
        CAPTURE(std::string(text));
        CHECK_FALSE(parse_size(text).has_value());
    }
    CHECK(parse_size("18446744073709551615") == std::numeric_limits<std::uint64_t>::max());
    CHECK(parse_size("16777215TiB") == std::uint64_t{16777215} << 40);
}

TEST_CASE("config units: format_size writes the largest exact IEC unit") {
    CHECK(format_size(0) == "0");
    CHECK(format_size(1000) == "1000");
    CHECK(format_size(1024) == "1KiB");
    CHECK(format_size(16 << 20) == "16MiB");
    CHECK(format_size(std::uint64_t{5} << 30) == "5GiB");
    CHECK(format_size(1536) == "1536"); // 1.5KiB is no whole unit
    for (std::uint64_t value : {std::uint64_t{1}, std::uint64_t{4096}, std::uint64_t{3} << 40, std::uint64_t{12345}})
        CHECK(parse_size(format_size(value)) == value);
}

TEST_CASE("config units: percentages as fractions in [0, 1]") {
    CHECK(parse_percentage("0%") == 0.0);
    CHECK(parse_percentage("10%") == doctest::Approx(0.10));
    CHECK(parse_percentage("12.5%") == doctest::Approx(0.125));
    CHECK(parse_percentage("100%") == 1.0);
    CHECK(parse_percentage("100.000%") == 1.0);
    CHECK(parse_percentage("0.000001%") == doctest::Approx(1e-8));
}

TEST_CASE("config units: percentages refused") {
    for (auto text : {""sv,     "%"sv,    "10"sv,    "0.1"sv,
                      "-5%"sv,  "+5%"sv,  "150%"sv,  "100.1%"sv,
                      "101%"sv, "10 %"sv, " 10%"sv,  "10%%"sv,
                      ".5%"sv,  "5.%"sv,  "1e1%"sv,  "10.0000001%"sv,
                      "%10"sv,  "ten%"sv, "10%\0"sv, "99999999999999999999%"sv}) {
        CAPTURE(std::string(text));
        CHECK_FALSE(parse_percentage(text).has_value());
    }
}
