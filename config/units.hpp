#pragma once
// Durations, sizes and percentages as an operator writes them in the configuration:
// "1h30m", "64MiB", "10%". Parsers return nullopt for anything they do not read exactly;
// the caller decides which values make sense (zero, ranges) and says so by name.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mirror::config {

/// A duration: one or more `<digits><unit>` parts with units d, h, m, s, ms, largest
/// first and each at most once ("500ms", "30s", "5m", "1h30m", "2d12h"). "0s" is read
/// as zero. nullopt for a bare number, a sign, a fraction, spaces, units out of order or
/// repeated, and a total past what std::chrono::milliseconds holds.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) noexcept;

/// A size in bytes: decimal digits, then nothing or "B" (bytes), an SI unit kB, MB, GB,
/// TB (powers of 1000) or an IEC unit KiB, MiB, GiB, TiB (powers of 1024): "4096",
/// "10kB", "100MB", "512KiB", "64MiB", "1GiB". Units are case-sensitive ("KB", "mb" and
/// "K" are refused, being ambiguous). nullopt for signs, fractions, spaces and overflow
/// of 64 bits.
std::optional<std::uint64_t> parse_size(std::string_view text) noexcept;

/// A percentage from 0% to 100%, with at most 6 decimals ("10%", "12.5%"), as a
/// fraction in [0, 1]. nullopt without the '%', with a sign or spaces, or past 100%.
std::optional<double> parse_percentage(std::string_view text) noexcept;

/// A duration in the largest units that write it exactly, as parse_duration reads them:
/// 90 minutes is "1h30m", 1500 ms is "1s500ms", zero is "0s". Negative: "-" and the rest.
std::string format_duration(std::chrono::milliseconds value);

/// A size in the largest IEC unit that writes it exactly ("16MiB", "1GiB"), else bytes
/// ("1000"), as parse_size reads it.
std::string format_size(std::uint64_t bytes);

} // namespace mirror::config
