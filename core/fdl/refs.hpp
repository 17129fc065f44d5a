#pragma once
// HEAD, refs/heads/*, refs/tags/* and refs.json (spec/layout.en.txt; spec README, "refs.json").

#include "core/fdl/json_limits.hpp"
#include "verify/error.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mirror::fdl {

/// Ref name -> version ID, ordered by name.
using ref_map = std::map<std::string, std::string, std::less<>>;

/// What HEAD holds: a symbolic ref ("ref: refs/heads/main") or a version ID.
struct head_value {
    std::optional<std::string> symbolic; ///< the ref it names
    std::optional<std::string> detached; ///< a version ID
};

/// The content of refs.json.
struct refs_document {
    std::optional<std::string> head; ///< the HEAD line, "ref: refs/heads/main"
    ref_map refs;
    /// Entries refused one by one (a bad name or id); the others stand. Never rendered.
    /// At most max_refused_listed; the rest are counted in refused_more.
    std::vector<error> refused;
    std::size_t refused_more = 0;
};

/// The refused entries of refs.json named one by one: a file of a million bad entries
/// would otherwise keep a million messages.
inline constexpr std::size_t max_refused_listed = 100;

/// Parses a ref file: a version ID, optionally followed by one "\n".
/// `file` names the ref in messages ("refs/heads/main").
result<std::string> parse_ref_file(std::string_view text, std::string_view file);

/// The bytes of a ref file holding `version_id`.
std::string render_ref_file(std::string_view version_id);

/// Parses HEAD: "ref: <name>" naming a mirrored ref, or a version ID; one final "\n" allowed.
result<head_value> parse_head(std::string_view text, std::string_view file = "HEAD");

/// Parses refs.json in the project's shape ({"HEAD": …, "refs": {name: id}}) or the
/// tolerated flat shape ({name: id, …}); unknown keys are ignored. A ref whose name fails
/// ref_name_problem or whose value is not a version ID is refused on its own (`refused`,
/// fdl_errc::bad_ref_name or bad_version_id): one hostile entry does not cost the others.
/// The file is refused when it is not JSON, not an object, or HEAD or refs has the wrong type.
/// Parses refs.json; its tree may take at most `max_tree_bytes` (a caller with a memory
/// budget gives its share), else fdl_errc::too_large.
result<refs_document> parse_refs_json(std::string_view text, std::size_t max_tree_bytes = default_max_tree_bytes);

/// Renders refs.json in the project's shape, keys sorted, one ref per line.
std::string render_refs_json(refs_document const& document);

} // namespace mirror::fdl
