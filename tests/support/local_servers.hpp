#pragma once
// What the test-server fixtures (nginx, s3rver) share: finding a program, reading a log,
// and asking whether a loopback port accepts connections.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace mirror::test {

/// `name` on PATH, else `fallback` when it is executable (Debian keeps nginx in /usr/sbin,
/// off a non-root PATH); empty when there is neither.
std::filesystem::path find_program(std::string_view name, std::filesystem::path const& fallback);

/// A whole text file, or "" when it cannot be read (a log not written yet).
std::string read_text(std::filesystem::path const& path);

/// Whether a TCP connection to 127.0.0.1:`port` succeeds now.
bool accepts_connections(std::uint16_t port);

} // namespace mirror::test
