#include "core/sync/partial.hpp"
#include <doctest/doctest.h>

using namespace mirror::sync;

TEST_CASE("partial record: what a partial mirror follows reads back as written, depth and head included") {
    partial_record const shallow{{"refs/heads/main"}, {"refs/heads/tmp-*"}, std::string("refs/heads/main"), 3, 1796400000};
    auto read = parse_partial(render_partial(shallow), ".fdl-mirror/partial");
    REQUIRE(read.has_value());
    CHECK(read->include == shallow.include);
    CHECK(read->exclude == shallow.exclude);
    CHECK(read->head == shallow.head);
    CHECK(read->depth == 3u);
    CHECK(read->since == shallow.since);

    partial_record const refs_only{{"refs/tags/*"}, {}, std::nullopt, std::nullopt, 5};
    read = parse_partial(render_partial(refs_only), ".fdl-mirror/partial");
    REQUIRE(read.has_value());
    CHECK_FALSE(read->head.has_value());
    CHECK_FALSE(read->depth.has_value());
    // An older record wrote null for an absent head.
    CHECK(parse_partial(R"({"include":[],"exclude":[],"since":1,"head":null,"depth":null})", "p").has_value());
}

TEST_CASE("partial record: a depth that is not a positive count is refused, naming the field") {
    for (auto text : {R"({"include":[],"exclude":[],"since":1,"depth":0})",
                      R"({"include":[],"exclude":[],"since":1,"depth":-2})",
                      R"({"include":[],"exclude":[],"since":1,"depth":"3"})"}) {
        auto read = parse_partial(text, ".fdl-mirror/partial");
        CAPTURE(text);
        REQUIRE_FALSE(read.has_value());
        CHECK(read.error().message.find("depth") != std::string::npos);
    }
}

TEST_CASE("partial record: a mirror deepens when its depth grows or goes away, not when it shrinks") {
    partial_record at3{{}, {}, std::nullopt, 3, 0};
    CHECK(deepens(at3, 10));
    CHECK(deepens(at3, std::nullopt));
    CHECK_FALSE(deepens(at3, 3));
    CHECK_FALSE(deepens(at3, 2));
    CHECK_FALSE(deepens(std::nullopt, 3));                                   // a full mirror made shallow
    CHECK_FALSE(deepens(partial_record{{"refs/tags/*"}, {}, {}, {}, 0}, 3)); // chosen refs, whole history
}
