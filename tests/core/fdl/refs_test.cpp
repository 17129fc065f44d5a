#include "core/fdl/refs.hpp"
#include <doctest/doctest.h>

#include "tests/support/results.hpp"

#include "core/fdl/errors.hpp"

#include <cctype>
#include <string>
#include <string_view>

using namespace mirror::fdl;
using boost::system::error_code;
using namespace std::string_view_literals;

using mirror::test::code_of;
using mirror::test::message_of;

namespace {

constexpr char const* id_a = "019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c";
constexpr char const* id_b = "019a2f10-0c4d-7e88-a1b2-55c0d9e3f7aa";

} // namespace

TEST_CASE("a ref file holds one version id, with or without one final newline") {
    auto plain = parse_ref_file(id_a, "refs/heads/main");
    REQUIRE(plain.has_value());
    CHECK(*plain == id_a);

    auto with_newline = parse_ref_file(std::string(id_a) + "\n", "refs/heads/main");
    REQUIRE(with_newline.has_value());
    CHECK(*with_newline == id_a); // the newline is not part of the id
}

TEST_CASE("a ref file with anything else is refused, naming the ref") {
    std::string const id = id_a;
    std::string upper = id;
    for (auto& c : upper)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    for (std::string const& text : {id + "\n\n", id + "\r\n", " " + id, id + " ", upper, upper + "\n",
                                    std::string("\n"), std::string(), id.substr(0, 35) + "\n",
                                    std::string("550e8400-e29b-41d4-a716-446655440000\n"), id + "\n" + id}) {
        CAPTURE(text);
        auto r = parse_ref_file(text, "refs/tags/v1");
        CHECK(code_of(r) == make_error_code(fdl_errc::bad_version_id));
        CHECK(message_of(r).starts_with("refs/tags/v1: "));
    }
}

TEST_CASE("render_ref_file writes what parse_ref_file reads") {
    std::string const bytes = render_ref_file(id_b);
    CHECK(bytes == std::string(id_b) + "\n");
    auto back = parse_ref_file(bytes, "refs/heads/main");
    REQUIRE(back.has_value());
    CHECK(*back == id_b);
}

TEST_CASE("HEAD may name a branch or tag") {
    for (std::string_view text : {"ref: refs/heads/main"sv, "ref: refs/heads/main\n"sv}) {
        auto head = parse_head(text);
        INFO(message_of(head));
        REQUIRE(head.has_value());
        REQUIRE(head->symbolic.has_value());
        CHECK(*head->symbolic == "refs/heads/main");
        CHECK_FALSE(head->detached.has_value());
    }
    auto tag = parse_head("ref: refs/tags/2025-final\n");
    REQUIRE(tag.has_value());
    REQUIRE(tag->symbolic.has_value());
    CHECK(*tag->symbolic == "refs/tags/2025-final");
}

TEST_CASE("HEAD may hold a version id (detached)") {
    auto head = parse_head(std::string(id_a) + "\n");
    INFO(message_of(head));
    REQUIRE(head.has_value());
    REQUIRE(head->detached.has_value());
    CHECK(*head->detached == id_a);
    CHECK_FALSE(head->symbolic.has_value());
}

TEST_CASE("HEAD naming a ref that is not mirrored, or a bad name, is refused") {
    for (std::string_view text : {"ref: refs/requests/1"sv, "ref: refs/heads/"sv, "ref: refs/heads/../x"sv,
                                  "ref: refs/heads/a b"sv, "ref: refs/heads/x.lock"sv, "ref: refs/heads/a~1"sv,
                                  "ref: refs/notes/x"sv}) {
        CAPTURE(text);
        auto head = parse_head(text, "HEAD");
        CHECK(code_of(head) == make_error_code(fdl_errc::bad_ref_name));
        CHECK(message_of(head).starts_with("HEAD: "));
    }
}

TEST_CASE("HEAD that is neither form is refused") {
    for (std::string_view text : {""sv, "\n"sv, "ref:refs/heads/main"sv, "ref: refs/heads/main\n\n"sv,
                                  "refs/heads/main"sv, "019A3C4E-7B21-7F3A-9C55-2F0D8E1A4B6C"sv}) {
        CAPTURE(text);
        auto head = parse_head(text, "origin HEAD");
        CHECK_FALSE(head.has_value());
        CHECK(message_of(head).starts_with("origin HEAD: "));
    }
}

TEST_CASE("refs.json in the project's shape") {
    auto doc = parse_refs_json(R"({
      "HEAD": "ref: refs/heads/main",
      "refs": {
        "refs/heads/main": "019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c",
        "refs/tags/2025-final": "019a2f10-0c4d-7e88-a1b2-55c0d9e3f7aa"
      }
    })");
    INFO(message_of(doc));
    REQUIRE(doc.has_value());
    REQUIRE(doc->head.has_value());
    CHECK(*doc->head == "ref: refs/heads/main");
    CHECK(doc->refs == ref_map{{"refs/heads/main", id_a}, {"refs/tags/2025-final", id_b}});
}

TEST_CASE("refs.json in the tolerated flat shape") {
    auto doc = parse_refs_json(R"({"refs/heads/main": "019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c",
                                   "refs/tags/t": "019a2f10-0c4d-7e88-a1b2-55c0d9e3f7aa"})");
    INFO(message_of(doc));
    REQUIRE(doc.has_value());
    CHECK_FALSE(doc->head.has_value());
    CHECK(doc->refs == ref_map{{"refs/heads/main", id_a}, {"refs/tags/t", id_b}});
}

TEST_CASE("refs.json: unknown keys are ignored") {
    auto doc = parse_refs_json(R"({"generated_by":"host 1.2","count":2,"extra":{"x":[1]},
                                   "refs":{"refs/heads/main":"019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c"}})");
    INFO(message_of(doc));
    REQUIRE(doc.has_value());
    CHECK(doc->refs == ref_map{{"refs/heads/main", id_a}});

    auto empty = parse_refs_json("{}");
    REQUIRE(empty.has_value());
    CHECK(empty->refs.empty());
    CHECK_FALSE(empty->head.has_value());
}

TEST_CASE("refs.json: a bad ref name refuses that ref alone") {
    for (std::string_view text :
         {R"({"refs":{"refs/heads/main":"019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c",
                      "refs/heads/a..b":"019a2f10-0c4d-7e88-a1b2-55c0d9e3f7aa"}})"sv,
          R"({"refs/heads/main":"019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c","refs/heads/x.lock":"019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c"})"sv,
          R"({"refs":{"refs/heads/main":"019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c","refs/heads/a b":"019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c"}})"sv,
          R"({"refs":{"refs/heads/main":"019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c","refs/heads/":"019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c"}})"sv,
          R"({"refs":{"refs/heads/main":"019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c","":"019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c"}})"sv}) {
        CAPTURE(text);
        auto doc = parse_refs_json(text);
        REQUIRE(doc.has_value());
        CHECK(doc->refs.size() == 1);
        CHECK(doc->refs.at("refs/heads/main") == "019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c");
        REQUIRE(doc->refused.size() == 1);
        CHECK(doc->refused[0].code == make_error_code(fdl_errc::bad_ref_name));
        CHECK(doc->refused[0].message.starts_with("refs.json: "));
    }
}

TEST_CASE("refs.json: a bad id refuses that ref alone") {
    for (std::string_view text :
         {R"({"refs":{"refs/heads/main":"019A3C4E-7B21-7F3A-9C55-2F0D8E1A4B6C"}})"sv,
          R"({"refs":{"refs/heads/main":"019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c\n"}})"sv,
          R"({"refs":{"refs/heads/main":"550e8400-e29b-41d4-a716-446655440000"}})"sv,
          R"({"refs":{"refs/heads/main":42}})"sv, R"({"refs":{"refs/heads/main":null}})"sv,
          R"({"refs/heads/main":"019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c","refs/tags/t":"nope"})"sv}) {
        CAPTURE(text);
        auto doc = parse_refs_json(text);
        REQUIRE(doc.has_value());
        REQUIRE(doc->refused.size() == 1);
        CHECK(doc->refused[0].code == make_error_code(fdl_errc::bad_version_id));
        CHECK(doc->refused[0].message.starts_with("refs.json: "));
        CHECK(!doc->refs.contains(doc->refused[0].message.find("refs/tags/t") != std::string::npos ? "refs/tags/t"
                                                                                                  : "refs/heads/main"));
    }
}

TEST_CASE("refs.json: a bad HEAD, a non-object refs or a non-object file is refused") {
    CHECK(code_of(parse_refs_json(R"({"HEAD":"ref: refs/requests/1"})")) == make_error_code(fdl_errc::bad_ref_name));
    CHECK(code_of(parse_refs_json(R"({"HEAD":7})")) == make_error_code(fdl_errc::wrong_type));
    CHECK_FALSE(parse_refs_json(R"({"HEAD":"garbage"})").has_value());
    CHECK(code_of(parse_refs_json(R"({"refs":["refs/heads/main"]})")) == make_error_code(fdl_errc::wrong_type));
    CHECK(code_of(parse_refs_json(R"([])")) == make_error_code(fdl_errc::wrong_type));
    CHECK(code_of(parse_refs_json(R"({"refs":{)")) == make_error_code(fdl_errc::bad_json));
    CHECK(code_of(parse_refs_json(std::string(10000, '{'))) == make_error_code(fdl_errc::bad_json));

    auto detached = parse_refs_json(R"({"HEAD":"019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c"})");
    REQUIRE(detached.has_value());
    REQUIRE(detached->head.has_value());
    CHECK(*detached->head == id_a);
}

TEST_CASE("render_refs_json round-trips through parse_refs_json") {
    refs_document doc;
    doc.head = "ref: refs/heads/main";
    doc.refs = {{"refs/tags/2025-final", id_b},
                {"refs/heads/main", id_a},
                {"refs/heads/feature/x", id_b},
                {"refs/tags/say-\"hi\"", id_a},      // needs escaping in JSON
                {"refs/heads/donn\xc3\xa9" "es", id_a}}; // UTF-8 stays UTF-8
    std::string const text = render_refs_json(doc);
    auto back = parse_refs_json(text);
    INFO(text);
    INFO(message_of(back));
    REQUIRE(back.has_value());
    CHECK(back->head == doc.head);
    CHECK(back->refs == doc.refs);

    // Byte-stable: the same document renders to the same bytes, also after a round trip.
    CHECK(render_refs_json(doc) == text);
    CHECK(render_refs_json(*back) == text);
    CHECK(text.ends_with("\n"));
}

TEST_CASE("render_refs_json sorts the refs and puts one on each line") {
    refs_document doc;
    doc.refs = {{"refs/tags/b", id_b}, {"refs/heads/z", id_a}, {"refs/heads/a", id_b}};
    std::string const text = render_refs_json(doc);
    INFO(text);
    auto a = text.find("\"refs/heads/a\"");
    auto z = text.find("\"refs/heads/z\"");
    auto b = text.find("\"refs/tags/b\"");
    REQUIRE(a != std::string::npos);
    REQUIRE(z != std::string::npos);
    REQUIRE(b != std::string::npos);
    CHECK(a < z);
    CHECK(z < b);
    // Each ref's line holds that ref's id and no other ref.
    for (auto at : {a, z, b}) {
        auto line_start = text.rfind('\n', at) + 1;
        auto line = text.substr(line_start, text.find('\n', at) - line_start);
        CAPTURE(line);
        CHECK(line.find("refs/", line.find("refs/") + 1) == std::string::npos);
        CHECK((line.find(id_a) != std::string::npos || line.find(id_b) != std::string::npos));
    }
    CHECK(text.find("HEAD") == std::string::npos); // no HEAD when the document has none

    auto empty = parse_refs_json(render_refs_json(refs_document{}));
    REQUIRE(empty.has_value());
    CHECK(empty->refs.empty());
    CHECK_FALSE(empty->head.has_value());
}
