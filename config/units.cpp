#include "config/units.hpp"

#include <array>
#include <charconv>
#include <cstddef>
#include <limits>
#include <utility>

namespace mirror::config {

namespace {

constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

/// Reads the leading decimal digits of `text` into `out`, advancing past them. False when
/// there are none or they overflow 64 bits.
bool take_digits(std::string_view& text, std::uint64_t& out) noexcept {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    // from_chars takes a leading '-' for signed types only; ours is unsigned, so a sign
    // is already refused. It reads no spaces.
    if (ec != std::errc() || end == text.data())
        return false;
    text.remove_prefix(static_cast<std::size_t>(end - text.data()));
    return true;
}

/// a * b + c within 64 bits, or nullopt.
std::optional<std::uint64_t> mul_add(std::uint64_t a, std::uint64_t b, std::uint64_t c) noexcept {
    std::uint64_t product = 0;
    std::uint64_t sum = 0;
    if (__builtin_mul_overflow(a, b, &product) || __builtin_add_overflow(product, c, &sum))
        return std::nullopt;
    return sum;
}

struct duration_unit {
    std::string_view name;
    std::uint64_t ms;
    int rank; ///< size order, largest first: the order a duration must write its parts in
};

// "ms" precedes "m" so that the longer name is tried first.
constexpr std::array<duration_unit, 5> duration_units{{
    {"d", 86'400'000, 0},
    {"h", 3'600'000, 1},
    {"ms", 1, 4},
    {"m", 60'000, 2},
    {"s", 1'000, 3},
}};

} // namespace

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) noexcept {
    if (text.empty())
        return std::nullopt;
    std::uint64_t total = 0;
    int last_rank = -1;
    while (!text.empty()) {
        std::uint64_t amount = 0;
        if (!take_digits(text, amount))
            return std::nullopt;
        duration_unit const* unit = nullptr;
        for (auto const& candidate : duration_units) {
            if (text.starts_with(candidate.name) &&
                (text.size() == candidate.name.size() || is_digit(text[candidate.name.size()]))) {
                unit = &candidate;
                break;
            }
        }
        if (unit == nullptr || unit->rank <= last_rank)
            return std::nullopt; // a bare number, an unknown unit, or units out of order
        last_rank = unit->rank;
        text.remove_prefix(unit->name.size());
        auto sum = mul_add(amount, unit->ms, total);
        if (!sum)
            return std::nullopt;
        total = *sum;
    }
    if (total > static_cast<std::uint64_t>(std::numeric_limits<std::chrono::milliseconds::rep>::max()))
        return std::nullopt;
    return std::chrono::milliseconds(static_cast<std::chrono::milliseconds::rep>(total));
}

std::optional<std::uint64_t> parse_size(std::string_view text) noexcept {
    static constexpr std::array<std::pair<std::string_view, std::uint64_t>, 10> units{{
        {"B", 1},
        {"kB", 1'000},
        {"MB", 1'000'000},
        {"GB", 1'000'000'000},
        {"TB", 1'000'000'000'000},
        {"KiB", std::uint64_t{1} << 10},
        {"MiB", std::uint64_t{1} << 20},
        {"GiB", std::uint64_t{1} << 30},
        {"TiB", std::uint64_t{1} << 40},
        {"", 1},
    }};
    std::uint64_t amount = 0;
    if (!take_digits(text, amount))
        return std::nullopt;
    for (auto const& [name, factor] : units)
        if (text == name)
            return mul_add(amount, factor, 0);
    return std::nullopt;
}

std::optional<double> parse_percentage(std::string_view text) noexcept {
    if (!text.ends_with('%'))
        return std::nullopt;
    text.remove_suffix(1);
    std::uint64_t whole = 0;
    if (!take_digits(text, whole) || whole > 100)
        return std::nullopt;
    // The fraction is read as an integer count of millionths, so "12.5%" is exact up to
    // the final division.
    std::uint64_t millionths = whole * 1'000'000;
    if (!text.empty()) {
        if (text.front() != '.' || text.size() < 2 || text.size() > 7)
            return std::nullopt;
        text.remove_prefix(1);
        std::uint64_t scale = 100'000;
        for (char c : text) {
            if (!is_digit(c))
                return std::nullopt;
            millionths += static_cast<std::uint64_t>(c - '0') * scale;
            scale /= 10;
        }
    }
    if (millionths > 100'000'000)
        return std::nullopt;
    return static_cast<double>(millionths) / 100'000'000.0;
}

std::string format_duration(std::chrono::milliseconds value) {
    if (value.count() == 0)
        return "0s";
    std::string out;
    // The magnitude as unsigned, so that the most negative value has one too.
    std::uint64_t rest = static_cast<std::uint64_t>(value.count());
    if (value.count() < 0) {
        out = "-";
        rest = std::uint64_t{0} - rest;
    }
    static constexpr std::array<duration_unit, 5> by_size{{
        {"d", 86'400'000, 0},
        {"h", 3'600'000, 1},
        {"m", 60'000, 2},
        {"s", 1'000, 3},
        {"ms", 1, 4},
    }};
    for (auto const& unit : by_size) {
        if (rest >= unit.ms) {
            out += std::to_string(rest / unit.ms);
            out += unit.name;
            rest %= unit.ms;
        }
    }
    return out;
}

std::string format_size(std::uint64_t bytes) {
    static constexpr std::array<std::pair<std::string_view, unsigned>, 4> units{{
        {"TiB", 40},
        {"GiB", 30},
        {"MiB", 20},
        {"KiB", 10},
    }};
    for (auto const& [name, shift] : units) {
        std::uint64_t const factor = std::uint64_t{1} << shift;
        if (bytes != 0 && bytes % factor == 0)
            return std::to_string(bytes / factor) + std::string(name);
    }
    return std::to_string(bytes);
}

} // namespace mirror::config
