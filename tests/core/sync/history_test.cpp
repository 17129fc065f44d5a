#include "core/sync/history.hpp"
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

using namespace mirror::sync;

namespace {

using strings = std::vector<std::string>;

} // namespace

TEST_CASE("mirroring_order turns one newest-first chain into oldest-first") {
    CHECK(mirroring_order({{"d", "c", "b", "a"}}) == strings{"a", "b", "c", "d"});
    CHECK(mirroring_order({{"x"}}) == strings{"x"});
    CHECK(mirroring_order({}).empty());
    CHECK(mirroring_order({{}, {}}).empty());
}

TEST_CASE("mirroring_order lists shared versions once, each after its first parent") {
    // main: d <- c <- b <- a; feature: f <- e <- b; tag: c.
    strings const order = mirroring_order({{"d", "c", "b", "a"}, {"f", "e", "b", "a"}, {"c", "b", "a"}});
    CHECK(order.size() == 6);
    CHECK(order == strings{"a", "b", "c", "d", "e", "f"});

    // The same chains in another order still put every parent first.
    strings const other = mirroring_order({{"f", "e", "b", "a"}, {"d", "c", "b", "a"}});
    std::map<std::string, std::string> const parent{{"b", "a"}, {"c", "b"}, {"d", "c"}, {"e", "b"}, {"f", "e"}};
    REQUIRE(other.size() == 6);
    for (auto const& [child, first_parent] : parent) {
        CAPTURE(child);
        auto child_at = std::find(other.begin(), other.end(), child);
        auto parent_at = std::find(other.begin(), other.end(), first_parent);
        REQUIRE(child_at != other.end());
        REQUIRE(parent_at != other.end());
        CHECK(parent_at < child_at);
    }
}

TEST_CASE("mirroring_order: identical chains give each version once") {
    CHECK(mirroring_order({{"b", "a"}, {"b", "a"}, {"b"}}) == strings{"a", "b"});
}

TEST_CASE("parents_first: a shallow ref's chain that stops above a parent another ref reaches puts that parent first") {
    // main's window (depth 2) is c, b; the tag's (depth 2) is b, a: chains without the versions
    // another walk already took, as a shallow pass makes them.
    strings const order = mirroring_order({{"c", "b"}, {"a"}});
    REQUIRE(order == strings{"b", "c", "a"}); // a after b: b would wait on a parent not yet copied
    std::map<std::string, std::string> const parent{{"c", "b"}, {"b", "a"}, {"a", "root"}};
    auto parent_of = [&](std::string const& id) -> std::optional<std::string> {
        auto it = parent.find(id);
        return it == parent.end() ? std::nullopt : std::optional(it->second);
    };
    CHECK(parents_first(order, parent_of) == strings{"a", "b", "c"});
    // Already in order: unchanged; a cycle among the parents ends.
    CHECK(parents_first(strings{"a", "b", "c"}, parent_of) == strings{"a", "b", "c"});
    auto cycle = [](std::string const& id) -> std::optional<std::string> { return id == "x" ? "y" : "x"; };
    CHECK(parents_first(strings{"x", "y"}, cycle).size() == 2);
}
