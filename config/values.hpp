#pragma once
// Option values shared by the command line and (later) the YAML configuration: the same
// words mean the same thing wherever an operator writes them.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mirror::config {

/// How an origin's signatures are enforced (spec README, "Signatures").
enum class signature_policy { required, if_present, off };

/// "required", "if-present" or "off"; nullopt for anything else.
std::optional<signature_policy> parse_signature_policy(std::string_view text) noexcept;
std::string_view to_string(signature_policy policy) noexcept;

/// A positive count within [1, max]: "16". nullopt for zero, signs, junk or overflow.
std::optional<std::uint64_t> parse_count(std::string_view text, std::uint64_t max) noexcept;

} // namespace mirror::config
