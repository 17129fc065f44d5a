#include "core/fdl/small_files.hpp"
#include <doctest/doctest.h>

#include "tests/support/results.hpp"

#include "core/fdl/errors.hpp"

#include <string>
#include <string_view>

using namespace mirror::fdl;
using boost::system::error_code;

using mirror::test::code_of;
using mirror::test::message_of;

namespace {

constexpr std::string_view dataset_file = "versions/x/dataset.json";
constexpr std::string_view expired_file = "versions/x/expired.json";

} // namespace

TEST_CASE("dataset.json: the spec's example parses") {
    auto r = parse_dataset(R"({
      "name": "population",
      "title": "Population by town",
      "description": "Census population of each town, by age and sex",
      "keywords": ["population", "census"],
      "licenses": [{ "id": "CC-BY-4.0" }],
      "tables": [{ "schema": "main", "name": "population", "title": "Population", "rows": 120000 }],
      "annotations": {}
    })",
                           dataset_file);
    INFO(message_of(r));
    REQUIRE(r.has_value());
    CHECK(r->name == "population");
    CHECK(r->title == "Population by town");
}

TEST_CASE("dataset.json: name and title are all it needs") {
    auto r = parse_dataset(R"({"title":"T","name":"n"})", dataset_file);
    REQUIRE(r.has_value());
    CHECK(r->name == "n");
    CHECK(r->title == "T");
    CHECK(parse_dataset(R"({"name":"n","title":"T","extensions":{"x":1}})", dataset_file).has_value());
}

TEST_CASE("dataset.json: a missing or mistyped name or title is refused, naming the field") {
    auto no_title = parse_dataset(R"({"name":"n"})", dataset_file);
    CHECK(code_of(no_title) == make_error_code(fdl_errc::missing_field));
    CHECK(message_of(no_title).starts_with("versions/x/dataset.json: title: "));

    auto no_name = parse_dataset(R"({"title":"T"})", dataset_file);
    CHECK(code_of(no_name) == make_error_code(fdl_errc::missing_field));
    CHECK(message_of(no_name).starts_with("versions/x/dataset.json: name: "));

    auto number = parse_dataset(R"({"name":1,"title":"T"})", dataset_file);
    CHECK(code_of(number) == make_error_code(fdl_errc::wrong_type));
    CHECK(message_of(number).starts_with("versions/x/dataset.json: name: "));

    CHECK(code_of(parse_dataset(R"({"name":"n","title":null})", dataset_file)) ==
          make_error_code(fdl_errc::wrong_type));
    CHECK(code_of(parse_dataset(R"({})", dataset_file)) == make_error_code(fdl_errc::missing_field));
}

TEST_CASE("dataset.json: annotations and extensions must be objects") {
    for (std::string_view text : {R"({"name":"n","title":"T","annotations":[]})",
                                  R"({"name":"n","title":"T","extensions":"x"})",
                                  R"({"name":"n","title":"T","annotations":{},"extensions":1})"}) {
        CAPTURE(text);
        auto r = parse_dataset(text, dataset_file);
        CHECK(code_of(r) == make_error_code(fdl_errc::wrong_type));
        CHECK(message_of(r).starts_with("versions/x/dataset.json: "));
    }
}

TEST_CASE("dataset.json: text that is not a JSON object is refused") {
    CHECK(code_of(parse_dataset("", dataset_file)) == make_error_code(fdl_errc::bad_json));
    CHECK(code_of(parse_dataset(R"({"name":"n","title":"T")", dataset_file)) == make_error_code(fdl_errc::bad_json));
    CHECK(code_of(parse_dataset(std::string(10000, '['), dataset_file)) == make_error_code(fdl_errc::bad_json));
    CHECK(code_of(parse_dataset("{\"name\":\"\xff\",\"title\":\"T\"}", dataset_file)) ==
          make_error_code(fdl_errc::bad_json));
    CHECK(code_of(parse_dataset(R"(["name","title"])", dataset_file)) == make_error_code(fdl_errc::wrong_type));
    CHECK(message_of(parse_dataset("", dataset_file)).starts_with("versions/x/dataset.json: "));
}

TEST_CASE("expired.json: a withdrawal is told apart from expiry") {
    auto withdrawn = parse_expiry(R"({"reason":"withdrawn","at":"2027-01-01"})", expired_file);
    INFO(message_of(withdrawn));
    REQUIRE(withdrawn.has_value());
    CHECK(withdrawn->reason == std::optional<std::string>("withdrawn"));
    CHECK(withdrawn->withdrawn());

    auto retention = parse_expiry(R"({})", expired_file);
    REQUIRE(retention.has_value());
    CHECK_FALSE(retention->reason.has_value());
    CHECK_FALSE(retention->withdrawn());

    auto other = parse_expiry(R"({"reason":"retention"})", expired_file);
    REQUIRE(other.has_value());
    CHECK(other->reason == std::optional<std::string>("retention"));
    CHECK_FALSE(other->withdrawn());

    // Exact match only: no case folding, no trimming.
    for (std::string_view text : {R"({"reason":"Withdrawn"})", R"({"reason":"withdrawn "})"}) {
        auto r = parse_expiry(text, expired_file);
        REQUIRE(r.has_value());
        CHECK_FALSE(r->withdrawn());
    }
}

TEST_CASE("expired.json: a malformed file is refused") {
    auto number = parse_expiry(R"({"reason":1})", expired_file);
    CHECK(code_of(number) == make_error_code(fdl_errc::wrong_type));
    CHECK(message_of(number).starts_with("versions/x/expired.json: reason: "));
    CHECK(code_of(parse_expiry("", expired_file)) == make_error_code(fdl_errc::bad_json));
    CHECK(code_of(parse_expiry(R"("withdrawn")", expired_file)) == make_error_code(fdl_errc::wrong_type));
    CHECK(code_of(parse_expiry(R"({"reason":"withdrawn"}})", expired_file)) == make_error_code(fdl_errc::bad_json));
}

TEST_CASE("dataset.json: read without a tree, so values deep inside cost nothing but their text") {
    // 200,000 tiny arrays: 1.2 MB of text, which as a tree would take ten times that.
    std::string text = R"({"name":"n","annotations":{"k":[)";
    for (int i = 0; i < 200'000; ++i)
        text += "[1,2],";
    text += R"([1]], "name": "deep"}, "title":"T", "x": {"title": 1}})";
    auto r = parse_dataset(text, dataset_file);
    REQUIRE_MESSAGE(r.has_value(), message_of(r));
    CHECK(r->name == "n"); // the top level's, not a nested key's
    CHECK(r->title == "T");
    // Still JSON, once, as a parser reads it: cut short, a key twice, trailing bytes.
    CHECK(code_of(parse_dataset(text.substr(0, text.size() - 1), dataset_file)) == make_error_code(fdl_errc::bad_json));
    CHECK(message_of(parse_dataset(R"({"name":"n","title":"T","name":"m"})", dataset_file)) ==
          "versions/x/dataset.json: the key 'name' appears twice in one object");
    CHECK(code_of(parse_dataset(R"({"name":"n","title":"T"} {})", dataset_file)) == make_error_code(fdl_errc::bad_json));
    CHECK(message_of(parse_dataset(R"(["name"])", dataset_file)) ==
          "versions/x/dataset.json: expected a JSON object, found an array");
    CHECK(message_of(parse_dataset(R"({"name":"n","title":{"t":"T"}})", dataset_file)) ==
          "versions/x/dataset.json: title: expected a string, found an object");
    CHECK(message_of(parse_dataset("{\"name\":\"n\",\"title\":\"\xff\"}", dataset_file))
              .starts_with("versions/x/dataset.json: not valid JSON ("));
}
