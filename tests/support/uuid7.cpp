#include "tests/support/uuid7.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>

namespace mirror::test {

std::string next_version_id() {
    static std::uint64_t last_ms = 0;
    static std::mt19937_64 random{std::random_device{}()};
    auto now = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count());
    last_ms = now > last_ms ? now : last_ms + 1; // strictly increasing, even within one millisecond
    std::uint64_t r1 = random();
    std::uint64_t r2 = random();
    char text[37];
    std::snprintf(text, sizeof text, "%08llx-%04llx-7%03llx-%04llx-%012llx",
                  static_cast<unsigned long long>(last_ms >> 16), static_cast<unsigned long long>(last_ms & 0xffff),
                  static_cast<unsigned long long>(r1 & 0xfff),
                  static_cast<unsigned long long>(0x8000 | ((r1 >> 12) & 0x3fff)),
                  static_cast<unsigned long long>(r2 & 0xffffffffffffULL));
    return text;
}

} // namespace mirror::test
