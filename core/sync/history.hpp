#pragma once
// Ordering first-parent history for mirroring: a pure function.

#include <string>
#include <vector>

namespace mirror::sync {

/// Orders the versions to mirror, oldest first. `chains` holds one chain per ref, each
/// newest first (a tip, its first parent, …) as walked back to the first version the
/// mirror already has. A version appears once, after its first parent.
std::vector<std::string> mirroring_order(std::vector<std::vector<std::string>> const& chains);

} // namespace mirror::sync
