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

/// What a command printed on stdout, and how it exited.
struct command_output {
    int exit_code = -1; ///< the command's exit status; -1 when it did not exit normally
    std::string out;
};

/// Runs `command` with /bin/sh and collects its stdout (add "2>&1" for stderr too);
/// throws std::runtime_error when the shell cannot be started.
command_output run_shell(std::string const& command);

} // namespace mirror::test
