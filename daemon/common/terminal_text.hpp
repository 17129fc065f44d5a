#pragma once
// Text from an origin (ref names, paths, messages quoting them) made safe to show on a
// terminal or in a plain log line: it must not move the cursor, recolour the screen or
// reorder what a person reads. JSON output is not passed through here: it stays exact.

#include <string>
#include <string_view>

namespace mirror::daemon {

/// `text` with every character that acts on a terminal written as a visible escape:
/// C0 controls and DEL as \xNN (\n and \t too unless `keep_newlines`, which keeps '\n'
/// only), C1 controls and Unicode's bidirectional controls (U+061C, U+200E, U+200F,
/// U+202A to U+202E, U+2066 to U+2069) as \u{NNNN}, and bytes that are not valid UTF-8
/// as \xNN. Any other text is unchanged.
std::string terminal_safe(std::string_view text, bool keep_newlines);

/// Writes "fdl-mirror: MESSAGE\n" to standard error, terminal_safe.
void print_error(std::string_view message);

} // namespace mirror::daemon
