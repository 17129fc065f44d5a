#include "core/coord/assignment.hpp"

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace mirror::coord {

namespace {

/// FNV-1a, 64 bits: the same on every host and build, which std::hash is not.
std::uint64_t score(std::string_view member, std::string_view repository) {
    std::uint64_t h = 14695981039346656037ull;
    auto mix = [&](std::string_view text) {
        for (unsigned char c : text) {
            h ^= c;
            h *= 1099511628211ull;
        }
    };
    mix(member);
    mix(std::string_view("\0", 1));
    mix(repository);
    // FNV's last bytes move its high bits little: a final avalanche (splitmix64's).
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    return h ^ (h >> 31);
}

} // namespace

std::map<std::string, std::string> assign(std::vector<std::string> repositories, std::vector<std::string> members) {
    std::map<std::string, std::string> out;
    std::sort(members.begin(), members.end());
    members.erase(std::unique(members.begin(), members.end()), members.end());
    if (members.empty())
        return out;
    std::sort(repositories.begin(), repositories.end());
    repositories.erase(std::unique(repositories.begin(), repositories.end()), repositories.end());
    std::size_t const cap = (repositories.size() + members.size() - 1) / members.size();
    std::map<std::string, std::size_t, std::less<>> load;
    for (auto const& repository : repositories) {
        std::string const* best = nullptr;
        std::uint64_t best_score = 0;
        for (auto const& member : members) {
            if (load[member] >= cap)
                continue;
            auto s = score(member, repository);
            if (best == nullptr || s > best_score || (s == best_score && member < *best)) {
                best = &member;
                best_score = s;
            }
        }
        ++load[*best];
        out[repository] = *best;
    }
    return out;
}

} // namespace mirror::coord
