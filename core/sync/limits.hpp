#pragma once
// The largest repository files read into memory. Past these a file is refused
// (store_errc::too_large): a hostile origin cannot make the mirror allocate without bound.
// Catalogs and data files are never read into memory; they stream.

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace mirror::sync::limits {

inline constexpr std::size_t ref_file = 4 * 1024;
inline constexpr std::size_t fdl_json = 1024 * 1024;
inline constexpr std::size_t refs_json = 16 * 1024 * 1024;
inline constexpr std::size_t version_json = 1024 * 1024;
inline constexpr std::size_t expired_json = 1024 * 1024;
inline constexpr std::size_t dataset_json = 16 * 1024 * 1024;
inline constexpr std::size_t files_json = 64 * 1024 * 1024;
/// What versions gathered ahead of their publication may hold (files read into memory,
/// lists of data files, catalog copies in the scratch folder), roughly; one version is
/// always gathered ahead, whatever it holds.
inline constexpr std::uint64_t look_ahead_bytes = 16 * 1024 * 1024;
/// How long a pass waits before it reads again a ref, HEAD or refs.json that did not parse:
/// a publisher rewriting it in place (truncate, then write) is seen with it empty or cut
/// short for a moment, and an origin that writes atomically never costs this wait.
inline constexpr std::chrono::milliseconds settle_pause{50};
/// Versions walked back from one ref in one pass; longer histories are refused.
inline constexpr std::size_t history_length = 1'000'000;

} // namespace mirror::sync::limits
