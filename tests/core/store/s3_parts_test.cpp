#include "core/store/s3_parts.hpp"

#include <doctest/doctest.h>

#include <cstdint>

using namespace mirror::store;

namespace {

constexpr std::size_t mib = std::size_t{1} << 20;

/// The largest object an upload can take in S3's 10,000 parts from `base`.
std::uint64_t largest_object(std::size_t base) {
    std::uint64_t total = 0;
    for (std::size_t number = 1; number <= 10'000; ++number)
        total += part_bytes_at(base, number);
    return total;
}

} // namespace

TEST_CASE("s3 parts: without a configured size, a part is 16 MiB or a sixth of a smaller budget, never under 5 MiB") {
    CHECK(part_bytes_for_budget(0) == 16 * mib);
    CHECK(part_bytes_for_budget(std::uint64_t{192} * mib) == 16 * mib);
    CHECK(part_bytes_for_budget(std::uint64_t{96} * mib) == 16 * mib);
    CHECK(part_bytes_for_budget(std::uint64_t{48} * mib) == 8 * mib);
    CHECK(part_bytes_for_budget(std::uint64_t{40} * mib) == 6 * mib); // whole MiB: 6.67 down to 6
    CHECK(part_bytes_for_budget(std::uint64_t{32} * mib) == 5 * mib);
    CHECK(part_bytes_for_budget(std::uint64_t{8} * mib) == 5 * mib);
}

TEST_CASE("s3 parts: the first 800 parts keep the base size, then it doubles every 800, up to 5 GiB") {
    CHECK(part_bytes_at(16 * mib, 1) == 16 * mib);
    CHECK(part_bytes_at(16 * mib, 800) == 16 * mib);
    CHECK(part_bytes_at(16 * mib, 801) == 32 * mib);
    CHECK(part_bytes_at(16 * mib, 1600) == 32 * mib);
    CHECK(part_bytes_at(16 * mib, 1601) == 64 * mib);
    CHECK(part_bytes_at(5 * mib, 9'999) == std::size_t{5} << 30);
    CHECK(part_bytes_at(std::size_t{4} << 30, 801) == std::size_t{5} << 30);
    CHECK(part_bytes_at(16, 5) == 16); // tests' tiny parts stay as asked
}

TEST_CASE("s3 parts: an object of S3's largest size (5 TiB) fits in 10,000 parts from the smallest base") {
    std::uint64_t const five_tib = std::uint64_t{5} << 40;
    CHECK(largest_object(min_part_bytes) >= five_tib);
    CHECK(largest_object(16 * mib) >= five_tib);
    // Without the growth, 10,000 parts of 5 MiB hold 48.8 GiB: the growth is what makes it fit.
    CHECK(std::uint64_t{10'000} * min_part_bytes < five_tib);
}
