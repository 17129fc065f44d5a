// The patterns a partial mirror follows refs by (issue 35): the syntax's every form, what
// it refuses and why, and include and exclude together.

#include "core/fdl/errors.hpp"
#include "core/fdl/ref_patterns.hpp"

#include <doctest/doctest.h>

using namespace mirror;
using fdl::ref_pattern;

namespace {

ref_pattern pattern(std::string_view text) {
    auto parsed = ref_pattern::parse(text);
    REQUIRE_MESSAGE(parsed.has_value(), (parsed ? "" : parsed.error().message));
    return *parsed;
}

std::string refusal(std::string_view text) {
    auto parsed = ref_pattern::parse(text);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == fdl::fdl_errc::bad_value);
    return parsed.error().message;
}

} // namespace

TEST_CASE("a ref pattern without wildcards matches that ref alone") {
    auto main = pattern("refs/heads/main");
    CHECK(main.matches("refs/heads/main"));
    CHECK_FALSE(main.matches("refs/heads/main2"));
    CHECK_FALSE(main.matches("refs/heads/mai"));
    CHECK_FALSE(main.matches("refs/heads/main/x"));
    CHECK_FALSE(main.matches("refs/heads/Main")); // case-sensitive, as ref names are
}

TEST_CASE("* and ? match within one component, ** across components") {
    auto tags = pattern("refs/tags/v*");
    CHECK(tags.matches("refs/tags/v1"));
    CHECK(tags.matches("refs/tags/v"));
    CHECK(tags.matches("refs/tags/v2.0-rc1"));
    CHECK_FALSE(tags.matches("refs/tags/x1"));
    CHECK_FALSE(tags.matches("refs/tags/v1/patch")); // * stops at '/'

    auto one = pattern("refs/tags/v1.?");
    CHECK(one.matches("refs/tags/v1.2"));
    CHECK_FALSE(one.matches("refs/tags/v1.10"));
    CHECK_FALSE(one.matches("refs/tags/v1."));

    auto middle = pattern("refs/heads/*-stable");
    CHECK(middle.matches("refs/heads/2026-stable"));
    CHECK(middle.matches("refs/heads/-stable"));
    CHECK_FALSE(middle.matches("refs/heads/2026-stable-x"));

    auto all_heads = pattern("refs/heads/**");
    CHECK(all_heads.matches("refs/heads/main"));
    CHECK(all_heads.matches("refs/heads/team/a/feature"));
    CHECK_FALSE(all_heads.matches("refs/tags/v1"));

    auto nested = pattern("refs/heads/**/release");
    CHECK(nested.matches("refs/heads/release")); // ** is zero components too
    CHECK(nested.matches("refs/heads/team/release"));
    CHECK(nested.matches("refs/heads/a/b/c/release"));
    CHECK_FALSE(nested.matches("refs/heads/team/release/x"));

    auto everything = pattern("refs/**");
    CHECK(everything.matches("refs/tags/v1"));
    CHECK(everything.matches("refs/heads/a/b"));
}

TEST_CASE("a pattern that is no ref name with its wildcards as letters is refused, saying why") {
    CHECK(refusal("heads/main").find("does not start with refs/") != std::string::npos);
    CHECK(refusal("refs/heads/ma**in").find("'**' is a whole component") != std::string::npos);
    CHECK(refusal("refs/heads/").find("ref pattern 'refs/heads/'") != std::string::npos);
    CHECK_FALSE(ref_pattern::parse("refs/heads/a..b").has_value());
    CHECK_FALSE(ref_pattern::parse("refs/heads/[ab]").has_value()); // no character classes
    CHECK_FALSE(ref_pattern::parse("refs/heads/a b").has_value());
    CHECK_FALSE(ref_pattern::parse("refs//main").has_value());
    CHECK_FALSE(ref_pattern::parse("refs/heads/x.lock").has_value());
    CHECK(refusal(std::string("refs/heads/") + std::string(250, 'a')).find("longer than 255") != std::string::npos);
}

TEST_CASE("include and exclude together, and only branches and tags are ever followed") {
    fdl::ref_selection all;
    CHECK(all.everything());
    CHECK(all.follows("refs/heads/main"));
    CHECK(all.follows("refs/tags/v1"));
    CHECK_FALSE(all.follows("refs/requests/1")); // the origin host's own

    fdl::ref_selection tags_but_rc{{pattern("refs/tags/**")}, {pattern("refs/tags/*-rc*")}};
    CHECK_FALSE(tags_but_rc.everything());
    CHECK(tags_but_rc.follows("refs/tags/v1"));
    CHECK_FALSE(tags_but_rc.follows("refs/tags/v2-rc1"));
    CHECK_FALSE(tags_but_rc.follows("refs/heads/main"));

    fdl::ref_selection not_wip{{}, {pattern("refs/heads/wip/**")}};
    CHECK(not_wip.follows("refs/heads/main"));
    CHECK(not_wip.follows("refs/tags/v1"));
    CHECK_FALSE(not_wip.follows("refs/heads/wip/x"));

    fdl::ref_selection requests{{pattern("refs/**")}, {}};
    CHECK_FALSE(requests.follows("refs/requests/1")); // whatever the patterns say
}

TEST_CASE("many ** components against a long ref: no match, found without backtracking (a blow-up would not end)") {
    std::string text = "refs";
    for (int i = 0; i < 40; ++i)
        text += "/**/a*";
    auto many = pattern(text.substr(0, fdl::max_ref_pattern_bytes - 5) + "/**/b");
    std::string ref = "refs";
    for (int i = 0; i < 60; ++i)
        ref += "/aaaa";
    CHECK_FALSE(many.matches(ref)); // answers at once: no backtracking over components
}
