#pragma once
// Ordering first-parent history for mirroring: a pure function.

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mirror::sync {

/// Orders the versions to mirror, oldest first. `chains` holds one chain per ref, each
/// newest first (a tip, its first parent, …) as walked back to the first version the
/// mirror already has. A version appears once, after its first parent.
std::vector<std::string> mirroring_order(std::vector<std::vector<std::string>> const& chains);

/// `order` again, each version moved after its first parent when that parent is in `order`
/// too (`parent_of` gives a version's first parent): a shallow mirror's refs reach shared
/// history at different depths, so one ref's chain may hold a parent another's left out.
/// Ends whatever the parents say (a cycle included).
std::vector<std::string> parents_first(std::vector<std::string> const& order,
                                       std::function<std::optional<std::string>(std::string const&)> const& parent_of);

} // namespace mirror::sync
