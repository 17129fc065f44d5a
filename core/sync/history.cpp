#include "core/sync/history.hpp"

#include <unordered_set>

namespace mirror::sync {

std::vector<std::string> mirroring_order(std::vector<std::vector<std::string>> const& chains) {
    std::vector<std::string> order;
    std::unordered_set<std::string> seen;
    for (auto const& chain : chains)
        for (auto it = chain.rbegin(); it != chain.rend(); ++it)
            if (seen.insert(*it).second)
                order.push_back(*it);
    return order;
}

bool descends_from(std::string const& id, std::string const& ancestor, parent_lookup const& parent_of,
                   std::size_t limit) {
    std::string current = id;
    std::unordered_set<std::string> visited;
    for (std::size_t step = 0; step <= limit; ++step) {
        if (current == ancestor)
            return true;
        if (!visited.insert(current).second)
            return false; // a parent cycle: a broken history, never a descendant
        auto parent = parent_of(current);
        if (!parent || parent->empty())
            return false;
        current = std::move(*parent);
    }
    return false;
}

} // namespace mirror::sync
