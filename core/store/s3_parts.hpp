#pragma once
// How large the parts of an S3 multipart upload are: S3 wants each part but the last to
// be at least 5 MiB, at most 5 GiB, and at most 10,000 parts per object.

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace mirror::store {

inline constexpr std::size_t min_part_bytes = std::size_t{5} << 20;
inline constexpr std::size_t max_part_bytes = std::size_t{5} << 30;
inline constexpr std::size_t default_part_bytes = std::size_t{16} << 20;

/// The part size when none is configured, for a memory budget of `budget_bytes` (0: no
/// budget): 16 MiB, or a sixth of a smaller budget (at least 5 MiB), so that a small
/// budget still holds six parts (four in flight, two being filled) rather than two of
/// 16 MiB, which would serialise the uploads.
constexpr std::size_t part_bytes_for_budget(std::uint64_t budget_bytes) {
    if (budget_bytes == 0)
        return default_part_bytes;
    auto const sixth = static_cast<std::size_t>(std::min<std::uint64_t>(budget_bytes / 6, default_part_bytes));
    return std::max(min_part_bytes, sixth / (std::size_t{1} << 20) * (std::size_t{1} << 20));
}

/// The size of part `number` (from 1) of an upload whose first parts are `base` bytes:
/// the size doubles every 800 parts (up to 5 GiB), so that an object of any size S3
/// takes (5 TiB) fits in 10,000 parts from a base of 5 MiB, while objects of up to
/// 800 × base keep parts of the base size.
constexpr std::size_t part_bytes_at(std::size_t base, std::size_t number) {
    std::size_t const doublings = number == 0 ? 0 : (number - 1) / 800;
    std::size_t size = base;
    for (std::size_t i = 0; i < doublings && size < max_part_bytes; ++i)
        size = std::min(size * 2, max_part_bytes);
    return size;
}

} // namespace mirror::store
