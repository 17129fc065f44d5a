#pragma once
// The one assertion of the fuzz targets: an invariant that does not hold is a finding, so
// it stops the run like a sanitizer report (libFuzzer keeps the input as crash-<sha1>).

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace mirror::fuzz {

/// Prints `what` and the shown part of the input, then aborts. Never returns.
[[noreturn]] inline void fail(std::string_view what, std::string_view input = {}) {
    std::fprintf(stderr, "fuzz invariant broken: %.*s\n", static_cast<int>(what.size()), what.data());
    if (!input.empty())
        std::fprintf(stderr, "  on: '%.*s'\n", static_cast<int>(input.size() > 300 ? 300 : input.size()),
                     input.data());
    std::abort();
}

/// Aborts with `what` unless `holds`.
inline void check(bool holds, std::string_view what, std::string_view input = {}) {
    if (!holds)
        fail(what, input);
}

/// The fuzz input as text.
inline std::string_view as_text(unsigned char const* data, std::size_t size) {
    return {reinterpret_cast<char const*>(data), size};
}

} // namespace mirror::fuzz
