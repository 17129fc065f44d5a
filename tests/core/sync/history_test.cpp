#include "core/sync/history.hpp"
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

using namespace mirror::sync;

namespace {

using strings = std::vector<std::string>;

// A history given as child -> first parent ("" for a root); ids not in the map are unknown.
struct fake_history {
    std::map<std::string, std::string> parent;
    mutable std::size_t lookups = 0;

    parent_lookup lookup() const {
        return [this](std::string const& id) -> std::optional<std::string> {
            ++lookups;
            auto it = parent.find(id);
            if (it == parent.end())
                return std::nullopt;
            return it->second;
        };
    }
};

// a <- b <- c <- d, a is a root.
fake_history line() {
    return {{{"a", ""}, {"b", "a"}, {"c", "b"}, {"d", "c"}}};
}

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

TEST_CASE("descends_from follows first parents") {
    auto h = line();
    CHECK(descends_from("d", "a", h.lookup(), 100));
    CHECK(descends_from("d", "c", h.lookup(), 100));
    CHECK(descends_from("b", "a", h.lookup(), 100));
    CHECK(descends_from("c", "c", h.lookup(), 100)); // a version descends from itself
    CHECK(descends_from("c", "c", h.lookup(), 0));
}

TEST_CASE("descends_from is false for ancestors of nothing, siblings and descendants") {
    auto h = line();
    h.parent.emplace("e", "b"); // a sibling branch of c (emplace: GCC 12 warns falsely on operator= here)
    CHECK_FALSE(descends_from("a", "d", h.lookup(), 100)); // the other way round
    CHECK_FALSE(descends_from("e", "c", h.lookup(), 100));
    CHECK_FALSE(descends_from("c", "e", h.lookup(), 100));
    CHECK(descends_from("e", "a", h.lookup(), 100));
    CHECK_FALSE(descends_from("d", "zz", h.lookup(), 100)); // reaches the root
}

TEST_CASE("descends_from is false where a parent is unknown") {
    fake_history h{{{"d", "c"}, {"c", "b"}}}; // b's record could not be read
    CHECK_FALSE(descends_from("d", "a", h.lookup(), 100));
    CHECK(descends_from("d", "b", h.lookup(), 100)); // b itself is reached
}

TEST_CASE("descends_from stops at a cycle") {
    fake_history h{{{"x", "y"}, {"y", "z"}, {"z", "x"}}};
    CHECK_FALSE(descends_from("x", "nowhere", h.lookup(), 1'000'000));
    CHECK(h.lookups <= 4); // the cycle is seen, not walked a million times
    CHECK(descends_from("x", "z", h.lookup(), 1'000'000));

    fake_history self{{{"s", "s"}}};
    CHECK_FALSE(descends_from("s", "t", self.lookup(), 1'000'000));
    CHECK(self.lookups <= 2);
}

TEST_CASE("descends_from stops after `limit` steps") {
    auto h = line();
    // d -> c -> b -> a is three steps.
    CHECK(descends_from("d", "a", h.lookup(), 3));
    CHECK_FALSE(descends_from("d", "a", h.lookup(), 2));
    CHECK(descends_from("d", "c", h.lookup(), 1));
    CHECK_FALSE(descends_from("d", "c", h.lookup(), 0));

    // An endless history that never repeats: the limit bounds the work.
    std::size_t calls = 0;
    parent_lookup endless = [&calls](std::string const& id) -> std::optional<std::string> {
        ++calls;
        return id + "x";
    };
    CHECK_FALSE(descends_from("v", "never", endless, 50));
    CHECK(calls <= 51);
    CHECK(calls >= 50);
}
