#pragma once
// Cutting text that came from outside (a catalog's message, a pause reason, a key) to a
// length a message or a file may hold, without splitting a character: half of one is
// invalid UTF-8, which a JSON reader refuses (issue 45: a reason cut inside "ä" made a
// repository vanish from /status and its state file go unsaved).

#include <cstddef>
#include <string>
#include <string_view>

namespace mirror::io {

/// The longest prefix of `text` of at most `max_bytes` that does not end inside a UTF-8
/// character. Bytes that are not UTF-8 are cut where the limit falls.
std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes) noexcept;

/// `text` with each byte that is not part of a valid UTF-8 character replaced by U+FFFD,
/// so that it can go into JSON that a strict reader accepts.
std::string valid_utf8(std::string_view text);

} // namespace mirror::io
