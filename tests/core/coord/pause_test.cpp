// The operator's pause object (.fdl-mirror/paused): what `fdl-mirror pause` writes reads
// back the same, and whatever else is there still pauses, shown safely.

#include "core/coord/pause.hpp"

#include <doctest/doctest.h>

using namespace mirror;

TEST_CASE("pause: a rendered pause parses back equal") {
    coord::pause_record const record{1796450000.5, "alice@ops-1", "origin migration, ticket OPS-42"};
    CHECK(coord::parse_pause(coord::render_pause(record)) == record);
}

TEST_CASE("pause: an object that does not parse still pauses, and says why") {
    for (char const* text : {"", "not json", "[1,2]", "{\"paused_since\":", "\xff\xfe"}) {
        CAPTURE(text);
        auto const record = coord::parse_pause(text);
        CHECK(record.reason == "the pause object does not parse as a JSON object");
        CHECK(record.since == 0);
    }
}

TEST_CASE("pause: fields of the wrong type are left out, and text is made printable and short") {
    auto const record = coord::parse_pause(R"({"paused_since":"yesterday","by":["x"],"reason":"line\u001b[31mred\nnext"})");
    CHECK(record.since == 0);
    CHECK(record.by.empty());
    CHECK(record.reason == "line [31mred next");
    auto const long_reason = coord::parse_pause("{\"reason\":\"" + std::string(5000, 'x') + "\"}");
    CHECK(long_reason.reason.size() == 300);
}

TEST_CASE("pause: a long reason is cut between characters, and bytes that are not UTF-8 are replaced") {
    // Issue 45: 299 bytes and an "ä" were cut to 300 inside the "ä"; the state file that
    // holds the reason then failed to save, and the repository left /status.
    std::string const reason = std::string(299, 'x') + "\xc3\xa4 and more";
    auto const cut = coord::parse_pause(coord::render_pause({1.0, "bob", reason}));
    CHECK(cut.reason == std::string(299, 'x'));
    // What `fdl-mirror pause` is given may be any bytes: it is written as valid UTF-8, so
    // that the object still parses (and shows who paused, and why).
    auto const odd = coord::parse_pause(coord::render_pause({1.0, "b\xffob", "why\xc3"}));
    CHECK(odd.by == "b\xef\xbf\xbdob");
    CHECK(odd.reason == "why\xef\xbf\xbd");
}
