#include "daemon/common/terminal_text.hpp"
#include <doctest/doctest.h>

using mirror::daemon::terminal_safe;

TEST_CASE("terminal_safe leaves printable text alone, non-ASCII included") {
    for (std::string text : {"refs/heads/main", "versions/019a/ducklake.duckdb: sha256 is 4c1d…", "données/été.parquet",
                             "日本語/データ", "emoji 🦆", ""})
        CHECK(terminal_safe(text, false) == text);
    CHECK(terminal_safe("two\nlines\n", true) == "two\nlines\n");
}

TEST_CASE("terminal_safe escapes controls, bidirectional overrides and broken UTF-8") {
    CHECK(terminal_safe("a\x1b[31mred\x1b[0m", true) == "a\\x1b[31mred\\x1b[0m");
    CHECK(terminal_safe("bell\x07 del\x7f cr\r", true) == "bell\\x07 del\\x7f cr\\x0d");
    CHECK(terminal_safe("one\nline\tand tab", false) == "one\\nline\\tand tab");
    // U+202E RIGHT-TO-LEFT OVERRIDE: "evil<RLO>fdp.exe" would show as "evilexe.pdf".
    CHECK(terminal_safe("evil\u202efdp.exe", true) == "evil\\u{202e}fdp.exe");
    for (auto [raw, shown] : {std::pair{"\u061c", "\\u{061c}"}, std::pair{"\u200e", "\\u{200e}"},
                              std::pair{"\u200f", "\\u{200f}"}, std::pair{"\u202a", "\\u{202a}"},
                              std::pair{"\u2066", "\\u{2066}"}, std::pair{"\u2069", "\\u{2069}"},
                              std::pair{"\u0085", "\\u{0085}"}, std::pair{"\u009b", "\\u{009b}"}}) {
        CAPTURE(shown);
        CHECK(terminal_safe(raw, false) == shown);
    }
    // Not UTF-8: a lone continuation byte, a cut sequence, an overlong '/', a surrogate.
    CHECK(terminal_safe("a\x80z", true) == "a\\x80z");
    CHECK(terminal_safe("cut \xe2\x80", true) == "cut \\xe2\\x80");
    CHECK(terminal_safe("\xc0\xaf", true) == "\\xc0\\xaf");
    CHECK(terminal_safe("\xed\xa0\x80", true) == "\\xed\\xa0\\x80");
    CHECK(terminal_safe(std::string("nul\0byte", 8), true) == "nul\\x00byte");
}
