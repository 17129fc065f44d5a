#include "config/config_problem.hpp"
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

using namespace mirror::config;

TEST_CASE("config problem: text() is file:line:col: message, or file: message without a place") {
    CHECK(config_problem{"f.yaml", 3, 7, "bad"}.text() == "f.yaml:3:7: bad");
    CHECK(config_problem{"/etc/fdl-mirror/mirror.yaml", 12, 1, "unknown top-level key 'x'"}.text() ==
          "/etc/fdl-mirror/mirror.yaml:12:1: unknown top-level key 'x'");
    CHECK(config_problem{"f.yaml", 0, 0, "cannot read: no such file"}.text() == "f.yaml: cannot read: no such file");
}

TEST_CASE("config problem: throw_exception_from_error throws every problem, one a line") {
    config_problems const problems{{"f.yaml", 1, 2, "one"}, {"f.yaml", 3, 4, "two"}};
    try {
        throw_exception_from_error(problems, BOOST_CURRENT_LOCATION);
    } catch (std::runtime_error const& e) {
        CHECK(std::string(e.what()) == "f.yaml:1:2: one\nf.yaml:3:4: two");
    }
}
