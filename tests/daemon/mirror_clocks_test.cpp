// The clocks kept in the mirror (daemon/state/mirror_clocks.hpp): what is written, what is
// read back, what a new holder takes from them, and what a hostile object can do.

#include "daemon/state/mirror_clocks.hpp"

#include <doctest/doctest.h>

using namespace mirror;
using namespace mirror::daemon;

TEST_CASE("mirror clocks: the running clocks of a state are written and read back to the millisecond") {
    repository_state state;
    state.failing_since = 1'800'000'000.123;
    state.record.refs = {{"refs/heads/main", "a", std::string("b"), 2, 1'800'000'100.5},
                         {"refs/tags/v1", "c", std::string("c"), 0, std::nullopt}};
    state.record.held = {{"019a0000-0000-7000-8000-000000000001", "signature_invalid", "bad", 1'800'000'200.25}};
    auto clocks = clocks_of(state);
    CHECK(clocks.behind_since.size() == 1); // a ref in sync has no clock
    auto text = render_clocks(clocks, "alpha/life", 1'800'000'300);
    CHECK(text.find("\"written_by\":\"alpha/life\"") != std::string::npos);
    auto back = parse_clocks(text, "s3://m/r/.fdl-mirror/clocks");
    REQUIRE(back.has_value());
    CHECK(*back == clocks);
}

TEST_CASE("mirror clocks: a new holder continues the clocks still running, and stops those the last holder stopped") {
    repository_state mine; // what this daemon knew, standing by: old
    mine.failing_since = 1'700'000'000;
    mine.record.refs = {{"refs/heads/main", "a", std::string("a"), 0, 1'700'000'000},
                        {"refs/heads/dev", "a", std::string("a"), 0, std::nullopt}};
    mine.record.held = {{"019a0000-0000-7000-8000-000000000009", "x", "y", 1'700'000'000}};
    mirror_clocks kept; // the last holder's, newer
    kept.behind_since = {{"refs/heads/dev", 1'800'000'000}, {"refs/tags/new", 1'800'000'500}};
    kept.held_since = {{"019a0000-0000-7000-8000-000000000001", 1'800'000'100}};
    adopt_clocks(mine, kept);
    CHECK_FALSE(mine.failing_since.has_value()); // the last holder's passes succeeded
    auto since_of = [&](std::string const& ref) -> std::optional<double> {
        for (auto const& r : mine.record.refs)
            if (r.name == ref)
                return r.behind_since;
        return std::nullopt;
    };
    CHECK_FALSE(since_of("refs/heads/main").has_value());
    CHECK(since_of("refs/heads/dev") == 1'800'000'000.0);
    CHECK(since_of("refs/tags/new") == 1'800'000'500.0);
    REQUIRE(mine.record.held.size() == 1);
    CHECK(mine.record.held[0].version == "019a0000-0000-7000-8000-000000000001");
    CHECK(mine.record.held[0].since == 1'800'000'100.0);
    CHECK(clocks_of(mine) == kept);
}

TEST_CASE("mirror clocks: a damaged object is refused by name, and a huge one is cut to the earliest clocks") {
    for (std::string bad : {"", "[]", R"({"failing_since": -1})", R"({"behind_since": {"refs/heads/main": "soon"}})",
                            R"({"held_since": 3})"}) {
        CAPTURE(bad);
        auto refused = parse_clocks(bad, "s3://m/r/.fdl-mirror/clocks");
        REQUIRE_FALSE(refused.has_value());
        CHECK(refused.error().message.find("s3://m/r/.fdl-mirror/clocks") != std::string::npos);
    }
    repository_state state;
    for (int i = 0; i < 2000; ++i)
        state.record.refs.push_back({"refs/heads/b" + std::to_string(i), "a", std::nullopt, 1, 1'800'000'000.0 + i});
    auto clocks = clocks_of(state);
    CHECK(clocks.behind_since.size() == mirror_clocks::max_entries);
    CHECK(clocks.behind_since.contains("refs/heads/b0"));     // the earliest page first
    CHECK_FALSE(clocks.behind_since.contains("refs/heads/b1999"));
    CHECK(render_clocks(clocks, "a/b", 0).size() < mirror_clocks::max_bytes);
}
