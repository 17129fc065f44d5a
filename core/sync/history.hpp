#pragma once
// Walking first-parent history: pure functions over a parent lookup.

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mirror::sync {

/// The first parent of a version: nullopt when it is unknown (its record could not be
/// read), an empty string for a root version.
using parent_lookup = std::function<std::optional<std::string>(std::string const& id)>;

/// Orders the versions to mirror, oldest first. `chains` holds one chain per ref, each
/// newest first (a tip, its first parent, …) as walked back to the first version the
/// mirror already has. A version appears once, after its first parent.
std::vector<std::string> mirroring_order(std::vector<std::vector<std::string>> const& chains);

/// True when `ancestor` is `id` or is reached from `id` by following first parents.
/// Stops after `limit` steps, at a cycle, or where `parent_of` does not know a parent;
/// in those cases returns false (the caller treats the move as not a descendant).
bool descends_from(std::string const& id, std::string const& ancestor, parent_lookup const& parent_of,
                   std::size_t limit);

} // namespace mirror::sync
