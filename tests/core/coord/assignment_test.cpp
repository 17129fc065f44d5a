#include "core/coord/assignment.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

using mirror::coord::assign;

namespace {

std::vector<std::string> names(char const* prefix, int n) {
    std::vector<std::string> out;
    for (int i = 1; i <= n; ++i)
        out.push_back(prefix + std::to_string(i));
    return out;
}

std::map<std::string, int> loads(std::map<std::string, std::string> const& owners) {
    std::map<std::string, int> out;
    for (auto const& [repo, owner] : owners)
        ++out[owner];
    return out;
}

} // namespace

TEST_CASE("assignment: every repository to exactly one member, none past ceil(M/N)") {
    for (int members : {1, 2, 3, 5, 7}) {
        for (int repositories : {0, 1, 2, 12, 13, 100, 501}) {
            CAPTURE(members);
            CAPTURE(repositories);
            auto owners = assign(names("repo-", repositories), names("host-", members));
            CHECK(owners.size() == static_cast<std::size_t>(repositories));
            int const cap = (repositories + members - 1) / members;
            for (auto const& [member, load] : loads(owners)) {
                CHECK(member.starts_with("host-"));
                CHECK(load <= cap);
            }
        }
    }
    CHECK(assign(names("repo-", 3), {}).empty());
}

TEST_CASE("assignment: the same on every daemon, whatever the order of its lists") {
    auto repositories = names("r", 40);
    auto members = names("d", 4);
    auto const first = assign(repositories, members);
    std::mt19937 shuffle(7);
    for (int round = 0; round < 5; ++round) {
        std::shuffle(repositories.begin(), repositories.end(), shuffle);
        std::shuffle(members.begin(), members.end(), shuffle);
        members.push_back(members.front()); // a member seen twice is one member
        CHECK(assign(repositories, members) == first);
        members.pop_back();
    }
}

TEST_CASE("assignment: a member joining or leaving moves a share of the repositories, not all") {
    auto const repositories = names("repo-", 120);
    auto const three = assign(repositories, names("host-", 3));
    auto const four = assign(repositories, names("host-", 4));
    int moved = 0;
    for (auto const& [repo, owner] : three)
        moved += four.at(repo) != owner ? 1 : 0;
    // A quarter must move to the new member (30); a cascade of moves among the others
    // would show as many more.
    CHECK(moved >= 30);
    CHECK(moved <= 60);
    // The member that leaves takes nothing of the others' with it.
    auto const without_2 = assign(repositories, {"host-1", "host-3", "host-4"});
    int kept = 0;
    for (auto const& [repo, owner] : four)
        kept += owner != "host-2" && without_2.at(repo) == owner ? 1 : 0;
    CHECK(kept >= 60);
}
