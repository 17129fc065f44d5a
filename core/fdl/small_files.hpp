#pragma once
// dataset.json and expired.json: what a mirror checks of them.

#include "verify/error.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace mirror::fdl {

/// The parts of dataset.json a mirror checks: `name` and `title` are required strings;
/// `annotations` (or its older name `extensions`) must be an object when present.
struct dataset_summary {
    std::string name;
    std::string title;
};

/// Parses dataset.json, without building a JSON tree: it costs the text alone, however
/// large its other blocks. `file` names it in messages.
result<dataset_summary> parse_dataset(std::string_view text, std::string_view file);

/// expired.json: the past-retention mark. Its only field the spec names is
/// `"reason": "withdrawn"`; other fields are ignored.
struct expiry {
    std::optional<std::string> reason;
    bool withdrawn() const { return reason == "withdrawn"; }
};

/// Parses expired.json. `file` names it in messages.
result<expiry> parse_expiry(std::string_view text, std::string_view file);

} // namespace mirror::fdl
