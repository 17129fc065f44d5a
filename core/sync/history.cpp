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

} // namespace mirror::sync
