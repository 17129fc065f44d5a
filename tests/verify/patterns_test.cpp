#include "verify/patterns.hpp"
#include <doctest/doctest.h>

#include <chrono>
#include <string>

using namespace mirror::verify;

// Expected values follow ssh_config(5) PATTERNS and OpenSSH's match.c (match_pattern,
// match_pattern_list with dolower = 0, as sshsig.c calls it).

TEST_CASE("match_pattern without wildcards is an exact, case-sensitive comparison") {
    CHECK(match_pattern("user@example.com", "user@example.com"));
    CHECK_FALSE(match_pattern("user@example.com", "user@example.org"));
    CHECK_FALSE(match_pattern("User@example.com", "user@example.com"));
    CHECK_FALSE(match_pattern("user", "user@example.com"));
    CHECK_FALSE(match_pattern("user@example.com", "user"));
    CHECK(match_pattern("[a]", "[a]")); // no character classes
    CHECK_FALSE(match_pattern("a", "[a]"));
}

TEST_CASE("match_pattern with empty strings") {
    CHECK(match_pattern("", ""));
    CHECK(match_pattern("", "*"));
    CHECK(match_pattern("", "***"));
    CHECK_FALSE(match_pattern("", "?"));
    CHECK_FALSE(match_pattern("", "a"));
    CHECK_FALSE(match_pattern("a", ""));
}

TEST_CASE("match_pattern: '*' matches any run of characters") {
    CHECK(match_pattern("anything", "*"));
    CHECK(match_pattern("user@example.com", "*@example.com"));
    CHECK_FALSE(match_pattern("user@example.com.evil", "*@example.com"));
    CHECK(match_pattern("abc", "a*c"));
    CHECK(match_pattern("ac", "a*c"));
    CHECK_FALSE(match_pattern("ab", "a*c"));
    CHECK(match_pattern("ba", "*a"));
    CHECK_FALSE(match_pattern("ab", "*a"));
    CHECK(match_pattern("aXbYc", "a*b*c"));
    CHECK(match_pattern("aaab", "a*ab")); // needs backtracking
    CHECK(match_pattern("abcabd", "*abd"));
    CHECK_FALSE(match_pattern("abcabe", "*abd"));
    CHECK(match_pattern("a", "a**"));
    CHECK(match_pattern("mississippi", "m*iss*ppi"));
    CHECK_FALSE(match_pattern("mississippi", "m*iss*ppx"));
}

TEST_CASE("match_pattern: '?' matches exactly one character") {
    CHECK(match_pattern("abc", "a?c"));
    CHECK_FALSE(match_pattern("ac", "a?c"));
    CHECK_FALSE(match_pattern("abbc", "a?c"));
    CHECK(match_pattern("192.168.0.7", "192.168.0.?"));
    CHECK_FALSE(match_pattern("192.168.0.17", "192.168.0.?"));
    CHECK(match_pattern("x", "?*"));
    CHECK_FALSE(match_pattern("", "*?"));
    CHECK(match_pattern("abcd", "?*?"));
    CHECK(match_pattern("ab", "??"));
    CHECK_FALSE(match_pattern("abc", "??"));
}

TEST_CASE("match_pattern with many stars stays fast") {
    std::string const text(64, 'a');
    auto start = std::chrono::steady_clock::now();
    bool matched = match_pattern(text, "a*a*a*a*a*a*a*b");
    bool matched_many = match_pattern(text + text, "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b");
    auto elapsed = std::chrono::steady_clock::now() - start;
    CHECK_FALSE(matched);
    CHECK_FALSE(matched_many);
    // A naive recursive matcher takes minutes here; a backtracking one microseconds.
    CHECK(elapsed < std::chrono::milliseconds(500));
    CHECK(match_pattern(text + "b", "a*a*a*a*a*a*a*b"));
    CHECK(match_pattern(text, "a*a*a*a*a*a*a*a"));
}

TEST_CASE("match_pattern_list: a positive match") {
    CHECK(match_pattern_list("a@x", "a@x") == list_match::positive);
    CHECK(match_pattern_list("b@x", "a@x,b@x") == list_match::positive);
    CHECK(match_pattern_list("b@x", "a@x,*@x,c@x") == list_match::positive);
    CHECK(match_pattern_list("host3", "!host1,!host2,*") == list_match::positive);
    CHECK(match_pattern_list("good@x", "*,!bad@x") == list_match::positive);
}

TEST_CASE("match_pattern_list: no match") {
    CHECK(match_pattern_list("b@x", "a@x") == list_match::none);
    CHECK(match_pattern_list("b@x", "a@x,c@x") == list_match::none);
    CHECK(match_pattern_list("B@x", "b@x") == list_match::none); // case-sensitive
    // ssh_config(5): a negated match never produces a positive result by itself.
    CHECK(match_pattern_list("host3", "!host1,!host2") == list_match::none);
    CHECK(match_pattern_list("x", "") == list_match::none);
}

TEST_CASE("match_pattern_list: a negated match wins wherever it is") {
    CHECK(match_pattern_list("bad@x", "*,!bad@x") == list_match::negated);
    CHECK(match_pattern_list("bad@x", "!bad@x,*") == list_match::negated);
    CHECK(match_pattern_list("bad@x", "bad@x,!bad@x") == list_match::negated);
    CHECK(match_pattern_list("bad@x", "!*@x") == list_match::negated);
    CHECK(match_pattern_list("host1", "!host1,!host2,*") == list_match::negated);
    CHECK(match_pattern_list("a", "a,b,c,!?") == list_match::negated);
}

TEST_CASE("match_pattern_list: empty items") {
    CHECK(match_pattern_list("b", "a,,b") == list_match::positive);
    CHECK(match_pattern_list("x", ",") == list_match::none);
    CHECK(match_pattern_list("x", "a,") == list_match::none);
    CHECK(match_pattern_list("x", ",a") == list_match::none);
    // An empty item between commas matches only the empty string (match.c)...
    CHECK(match_pattern_list("", "a,,b") == list_match::positive);
    CHECK(match_pattern_list("", "!") == list_match::negated);
    // ...but an empty list, or a final comma, holds no item at all: match.c stops at the
    // end of the list (checked with `ssh-keygen -Y verify -I ""` against "a@x,").
    CHECK(match_pattern_list("", "") == list_match::none);
    CHECK(match_pattern_list("", "a,") == list_match::none);
}

TEST_CASE("match_pattern_list: a pattern of 1023 bytes or more ends the list with no match, as in OpenSSH 9.2") {
    std::string const at_limit(1022, 'x'), past_limit(1023, 'x');
    CHECK(match_pattern_list("alice", "alice," + at_limit) == list_match::positive);
    // Checked against ssh-keygen -Y verify: the long pattern wins over an earlier match.
    CHECK(match_pattern_list("alice", "alice," + past_limit) == list_match::none);
    CHECK(match_pattern_list(past_limit, past_limit) == list_match::none);
    CHECK(match_pattern_list(at_limit, at_limit) == list_match::positive);
    CHECK(match_pattern_list("alice", std::string(1022, 'x') + "*,alice") == list_match::none);
    // The '!' does not count, and a negated match before the long pattern has returned.
    CHECK(match_pattern_list("alice", "alice,!" + at_limit) == list_match::positive);
    CHECK(match_pattern_list("alice", "alice,!" + past_limit) == list_match::none);
    CHECK(match_pattern_list("alice", "!alice," + past_limit) == list_match::negated);
    // After it, nothing is looked at.
    CHECK(match_pattern_list("alice", past_limit + ",alice") == list_match::none);
}
