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

std::vector<std::string> parents_first(std::vector<std::string> const& order,
                                       std::function<std::optional<std::string>(std::string const&)> const& parent_of) {
    std::unordered_set<std::string> const wanted(order.begin(), order.end());
    std::unordered_set<std::string> placed;
    std::vector<std::string> out;
    for (auto const& id : order) {
        std::vector<std::string> line; // `id` and its ancestors in `order` not placed yet, newest first
        for (std::optional<std::string> at = id; at && wanted.contains(*at) && placed.insert(*at).second;
             at = parent_of(*at))
            line.push_back(*at);
        out.insert(out.end(), line.rbegin(), line.rend());
    }
    return out;
}

} // namespace mirror::sync
