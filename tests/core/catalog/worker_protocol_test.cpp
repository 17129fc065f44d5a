#include "core/catalog/worker_protocol.hpp"
#include <doctest/doctest.h>

#include "core/catalog/errors.hpp"

using namespace mirror;
using namespace mirror::catalog;

namespace {

catalog_contents sample() {
    catalog_contents c;
    c.format = "0.3";
    c.data_path = "s3://origin/data/";
    c.last_snapshot = 7;
    c.retained_snapshots = {1, 4, 7};
    catalog_table t{"main.towns", true, {}};
    t.files.push_back({"main/towns/a.parquet", 10, 1000, 200, catalog_delete{"main/towns/a-del.parquet", 2, 50}});
    t.files.push_back({"main/towns/b.parquet", 3, 300, std::nullopt, std::nullopt});
    c.tables.push_back(t);
    c.views.push_back({"main.v", "duckdb", "SELECT 1"});
    c.needed = {{"main/towns/a.parquet", 1000}, {"main/towns/a-del.parquet", 50}, {"main/towns/b.parquet", 300}};
    c.problems.push_back(make_error(catalog_errc::inlined_rows, "c: ducklake_inlined_data_1_1 holds 3 rows"));
    return c;
}

/// What `n` catalogs were asked for with.
std::vector<read_options> asked(std::size_t n, std::uint64_t max_files = 1'000'000, std::uint64_t max_memory = 0) {
    std::vector<read_options> out(n);
    for (auto& options : out) {
        options.max_files = max_files;
        options.max_memory = max_memory;
    }
    return out;
}

/// The answer for one catalog, decoded back.
result<std::vector<result<catalog_contents>>> round_trip(std::vector<result<catalog_contents>> const& outcomes,
                                                        std::uint64_t max_files = 1'000'000,
                                                        std::uint64_t max_memory = 0) {
    return decode_answer(encode_answer(outcomes), asked(outcomes.size(), max_files, max_memory), "c");
}

std::string garbage_of(result<std::vector<result<catalog_contents>>> const& r) {
    REQUIRE(!r.has_value());
    CHECK(r.error().code == catalog_errc::reader_crashed);
    return r.error().message;
}

} // namespace

TEST_CASE("an answer comes back as it was sent, contents and failures alike") {
    std::vector<result<catalog_contents>> sent;
    sent.emplace_back(sample());
    sent.emplace_back(make_error(catalog_errc::foreign_object, "d: defines a macro 'count'"));
    auto got = round_trip(sent);
    REQUIRE_MESSAGE(got.has_value(), (got ? "" : got.error().message));
    REQUIRE(got->size() == 2);
    auto const& c = (*got)[0].value();
    CHECK(c.format == "0.3");
    CHECK(c.data_path == "s3://origin/data/");
    CHECK(c.last_snapshot == 7);
    CHECK(c.retained_snapshots == std::vector<std::uint64_t>{1, 4, 7});
    REQUIRE(c.tables.size() == 1);
    CHECK(c.tables[0].renamed_columns);
    REQUIRE(c.tables[0].files.size() == 2);
    CHECK(c.tables[0].files[0].footer_bytes == 200);
    REQUIRE(c.tables[0].files[0].deletes.has_value());
    CHECK(c.tables[0].files[0].deletes->path == "main/towns/a-del.parquet");
    CHECK(c.tables[0].files[0].deletes->bytes == 50);
    CHECK(!c.tables[0].files[1].deletes.has_value());
    CHECK(c.views[0].sql == "SELECT 1");
    REQUIRE(c.needed.size() == 3);
    CHECK(c.needed[2].path == "main/towns/b.parquet");
    REQUIRE(c.problems.size() == 1);
    CHECK(c.problems[0].code == catalog_errc::inlined_rows);
    REQUIRE(!(*got)[1].has_value());
    CHECK((*got)[1].error().code == catalog_errc::foreign_object);
    CHECK((*got)[1].error().message == "d: defines a macro 'count'");
}

TEST_CASE("a request comes back as it was sent") {
    worker_request sent{"/var/tmp/pass-1",
                        {{"versions/x/ducklake.duckdb", {{3, 5}, std::chrono::milliseconds(1500), "64MB", 99, 7 << 20}}}};
    auto got = decode_request(encode_request(sent));
    REQUIRE(got.has_value());
    CHECK(got->folder == "/var/tmp/pass-1");
    REQUIRE(got->items.size() == 1);
    auto const& item = got->items[0];
    CHECK(item.name == "versions/x/ducklake.duckdb");
    CHECK(item.options.snapshots == std::vector<std::uint64_t>{3, 5});
    CHECK(item.options.time_limit == std::chrono::milliseconds(1500));
    CHECK(item.options.memory_limit == "64MB");
    CHECK(item.options.max_files == 99);
    CHECK(item.options.max_memory == 7 << 20);
    CHECK(!decode_request(encode_request(sent) + "x").has_value());
}

TEST_CASE("an answer decodes into no more memory than its catalog was allowed, counted as it is made") {
    std::vector<result<catalog_contents>> sent;
    sent.emplace_back(sample());
    std::uint64_t takes = sent[0]->memory_bytes();
    // The decoded copy takes what memory_bytes says: a limit of exactly that is enough.
    auto fits = round_trip(sent, 1'000'000, takes);
    REQUIRE_MESSAGE(fits.has_value(), (fits ? "" : fits.error().message));
    CHECK((*fits)[0]->memory_bytes() == takes);
    // A reader that answers more than it was allowed (an honest one refuses the catalog
    // itself, with over_memory_limit) is not believed: nothing past the limit is made.
    auto over = round_trip(sent, 1'000'000, takes - 1);
    CHECK(garbage_of(over).find("past the " + std::to_string(takes - 1) + " bytes of memory") != std::string::npos);
    // Many files of short paths cost far more decoded than sent: the charge sees it.
    catalog_contents many = sample();
    for (int i = 0; i < 20'000; ++i)
        many.needed.push_back({"main/t/" + std::to_string(i), 1});
    std::vector<result<catalog_contents>> big;
    big.emplace_back(many);
    std::uint64_t answer_bytes = encode_answer(big).size();
    CHECK(many.memory_bytes() > answer_bytes);
    CHECK(!round_trip(big, 1'000'000, answer_bytes).has_value());
}

TEST_CASE("an answer from a subverted reader is refused, whatever it lies about") {
    std::vector<result<catalog_contents>> one;
    SUBCASE("a path that leaves data_dir") {
        auto c = sample();
        c.needed[1].path = "../../etc/passwd";
        one.emplace_back(c);
        CHECK(garbage_of(round_trip(one)).find("data file path") != std::string::npos);
    }
    SUBCASE("an absolute path in a table") {
        auto c = sample();
        c.tables[0].files[1].path = "/etc/passwd";
        one.emplace_back(c);
        garbage_of(round_trip(one));
    }
    SUBCASE("a format the reader does not read") {
        auto c = sample();
        c.format = "9.9";
        one.emplace_back(c);
        garbage_of(round_trip(one));
    }
    SUBCASE("a last snapshot that is not retained") {
        auto c = sample();
        c.last_snapshot = 9;
        one.emplace_back(c);
        garbage_of(round_trip(one));
    }
    SUBCASE("more files than the limit") {
        one.emplace_back(sample());
        garbage_of(round_trip(one, 1));
    }
    SUBCASE("an error of another category") {
        one.emplace_back(sample());
        auto bytes = encode_answer(one);
        // The problem's code is the last u32 + text: make it a code past the known ones.
        auto at = bytes.rfind("c: ducklake_inlined") - 8 - 4;
        bytes[at] = static_cast<char>(200);
        CHECK(garbage_of(decode_answer(bytes, asked(1), "c")).find("error code of 200") != std::string::npos);
    }
    SUBCASE("cut short, at every length") {
        one.emplace_back(sample());
        auto bytes = encode_answer(one);
        for (std::size_t n = 0; n < bytes.size(); ++n) {
            CAPTURE(n);
            garbage_of(decode_answer(std::string_view(bytes).substr(0, n), asked(1), "c"));
        }
    }
    SUBCASE("a count that the bytes left could not hold") {
        std::string bytes = encode_answer({});
        bytes[0] = 1; // one outcome announced
        bytes += std::string(1, '\0');               // contents follow
        bytes += std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8); // a format of 2^63 bytes
        garbage_of(decode_answer(bytes, asked(1), "c"));
    }
    SUBCASE("another number of outcomes than catalogs asked") {
        one.emplace_back(sample());
        CHECK(garbage_of(decode_answer(encode_answer(one), asked(2), "c")).find("1 outcomes for 2") !=
              std::string::npos);
    }
}

TEST_CASE("a frame header names its kind, this protocol's version and a length within the limit") {
    auto header = encode_frame_header(frame_kind::answer, 1234);
    REQUIRE(header.size() == worker_frame_header_bytes);
    auto ok = decode_frame_header(header, frame_kind::answer, 2000, "c");
    REQUIRE(ok.has_value());
    CHECK(ok->length == 1234);
    CHECK(decode_frame_header(header, frame_kind::hello, 2000, "c").error().code == catalog_errc::reader_crashed);
    CHECK(decode_frame_header(header, frame_kind::answer, 1000, "c").error().code == catalog_errc::reader_limit);
    auto other_version = header;
    other_version[4] = static_cast<char>(worker_protocol_version + 1);
    CHECK(decode_frame_header(other_version, frame_kind::answer, 2000, "c")
              .error()
              .message.find("protocol version " + std::to_string(worker_protocol_version + 1)) != std::string::npos);
    CHECK(!decode_frame_header("FDLW", frame_kind::answer, 2000, "c").has_value());
}
