#pragma once
// Which daemon mirrors which repository: rendezvous hashing with bounded loads. Every
// daemon computes it alone from the same two lists, so daemons that see the same members
// agree without talking; leases stay the safety net while their views differ.

#include <map>
#include <string>
#include <vector>

namespace mirror::coord {

/// Each repository's daemon, out of `members` (at least one). Repositories are taken in
/// name order; each goes to the member that scores highest for it (a hash of both names)
/// among those holding fewer than ceil(repositories / members). So no member gets more
/// than that, and adding or removing a member moves few repositories.
std::map<std::string, std::string> assign(std::vector<std::string> repositories, std::vector<std::string> members);

} // namespace mirror::coord
