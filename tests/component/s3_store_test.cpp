// S3 stores against real S3 servers on loopback, each test against both: s3rver and Ceph
// RGW (tests/support/rgw.hpp, which also checks signatures and payload hashes): as a
// mirror and as an origin, with an independent client (Debian's AWS CLI) reading back
// what fdl-mirror wrote.

#include "core/store/s3_store.hpp"

#include "core/io/errors.hpp"
#include "core/sync/audit.hpp"
#include "core/sync/sync_pass.hpp"
#include "core/sync/workers.hpp"
#include "tests/component/aws_cli.hpp"
#include "tests/component/helpers.hpp"
#include "tests/support/budget_watching_sink.hpp"
#include "tests/support/local_servers.hpp"
#include "tests/support/rgw.hpp"
#include "tests/support/run.hpp"
#include "tests/support/s3rver.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <functional>

using namespace mirror;
using namespace mirror::test;
using io::store_errc;
namespace fs = std::filesystem;

namespace {

/// s3rver, with the buckets "mirror" and "origin".
struct on_s3rver {
    s3rver_server server{{.buckets = {"mirror", "origin"}}};
    std::string bucket(std::string const& name) const { return name; }
    std::string endpoint() const { return server.endpoint(); }
    std::string access_key() const { return std::string(s3rver_server::access_key_id); }
    std::string secret_key() const { return std::string(s3rver_server::secret_access_key); }
    std::string log() const { return server.log(); }
};

/// Ceph RGW, with a "mirror-N" and an "origin-N" bucket of this test's own.
struct on_rgw {
    rgw_server& server = rgw_server::shared();
    std::string mirror_bucket = server.create_bucket("mirror"), origin_bucket = server.create_bucket("origin");
    std::string bucket(std::string const& name) const { return name == "mirror" ? mirror_bucket : origin_bucket; }
    std::string endpoint() const { return server.endpoint(); }
    std::string access_key() const { return server.access_key_id(); }
    std::string secret_key() const { return server.secret_access_key(); }
    std::string log() const { return server.log_tail(); }
};

template <class Server>
struct s3_fixture : Server {
    temp_dir tmp;
    event_loop run_on;

    /// "s3://BUCKET/" followed by `rest`, BUCKET being this server's bucket for `name`.
    std::string url(std::string const& name, std::string const& rest) const {
        return "s3://" + this->bucket(name) + "/" + rest;
    }

    std::unique_ptr<store::s3_store> open(std::string const& url, std::size_t part_bytes = 16 * 1024 * 1024,
                                          std::size_t parallel_parts = 4) {
        store::s3_store_settings settings;
        settings.access.creds = {this->access_key(), this->secret_key(), std::nullopt};
        settings.access.endpoint = this->endpoint();
        settings.access.path_style = true;
        settings.allow_plain_http = true;
        settings.part_bytes = part_bytes;
        settings.multipart_threshold = part_bytes;
        settings.parallel_parts = parallel_parts;
        settings.client.backoff_base = std::chrono::milliseconds(1);
        auto opened = store::s3_store::open(url, settings);
        REQUIRE_MESSAGE(opened.has_value(), (opened ? "" : opened.error().message));
        return std::move(*opened);
    }

    /// The AWS CLI from Debian, pointed at the server and at nothing else.
    std::string aws(std::string const& args) {
        return aws_cli(tmp.path(), this->endpoint(), this->access_key(), this->secret_key(), args);
    }
};

} // namespace

TYPE_TO_STRING_AS("s3rver", on_s3rver);
TYPE_TO_STRING_AS("Ceph RGW", on_rgw);

TEST_CASE_TEMPLATE("a folder origin mirrors into S3, and the AWS CLI reads back the same bytes", S, on_s3rver, on_rgw) {
    s3_fixture<S> f;
    publisher origin(f.tmp / "origin");
    auto sample = publish_sample(origin);
    auto from = open_folder(f.tmp / "origin", false);
    auto to = f.open(f.url("mirror", "lake/population/"));
    auto r = f.run_on(sync::run_sync(*from, *to, {}, nullptr));
    INFO(describe(r) << f.log());
    CHECK(r.exit_code() == 0);
    CHECK(r.published.size() == 4);

    // An independent client copies the whole prefix down; it must equal the origin.
    f.aws("s3 cp --recursive --only-show-errors " + f.url("mirror", "lake/population/") + " " + (f.tmp / "copy").string());
    for (auto const& file : files_under(f.tmp / "origin"))
        if (file != "refs.json") // the mirror writes its own, from the refs it holds
            CHECK_MESSAGE(read_file(f.tmp / "copy" / file) == read_file(f.tmp / "origin" / file), file);
    CHECK(ref_of(f.tmp / "copy", "refs/heads/main") == sample.main.back());
    CHECK(reader_visible_problems(f.tmp / "copy").empty());

    // A second pass finds everything in place and writes nothing.
    auto again = f.run_on(sync::run_sync(*from, *to, {}, nullptr));
    CHECK(again.exit_code() == 0);
    CHECK(again.files_copied == 0);

    // verify audits the S3 mirror, including the ledger's digests.
    auto audit = f.run_on(sync::run_audit(*to, nullptr));
    CHECK(audit.exit_code() == 0);
    CHECK(audit.versions.size() == 4);
    std::uint64_t proven = 0;
    for (auto const& v : audit.versions)
        proven += v.data_files_proven;
    CHECK(proven > 0);
}

TEST_CASE_TEMPLATE("an S3 origin mirrors into a folder, listed page by page", S, on_s3rver, on_rgw) {
    s3_fixture<S> f;
    publisher origin(f.tmp / "origin");
    publish_sample(origin);
    f.aws("s3 cp --recursive --only-show-errors " + (f.tmp / "origin").string() + " " + f.url("origin", "repo/"));
    auto from = f.open(f.url("origin", "repo/"));
    auto to = open_folder(f.tmp / "mirror", true);
    auto r = f.run_on(sync::run_sync(*from, *to, {}, nullptr));
    INFO(describe(r) << f.log());
    CHECK(r.exit_code() == 0);
    CHECK(r.published.size() == 4);
    for (auto const& file : files_under(f.tmp / "mirror" / "versions"))
        CHECK(read_file(f.tmp / "mirror" / "versions" / file) == read_file(f.tmp / "origin" / "versions" / file));
    CHECK(reader_visible_problems(f.tmp / "mirror").empty());
}

TEST_CASE_TEMPLATE("the store's own operations: stat, read, list across pages, multipart, delete", S, on_s3rver, on_rgw) {
    s3_fixture<S> f;
    auto s3 = f.open(f.url("mirror", "p/"), 5 * 1024 * 1024);
    std::string big(12 * 1024 * 1024 + 17, 'z'); // three parts of at most 5 MiB
    for (std::size_t i = 0; i < big.size(); i += 4096)
        big[i] = static_cast<char>('a' + (i / 4096) % 26);
    auto written = f.run_on(store::write_all(*s3, "data/big.parquet", big, store::write_mode::create_only));
    REQUIRE_MESSAGE(written.has_value(), (written ? "" : written.error().message));
    auto size = f.run_on(s3->stat("data/big.parquet"));
    REQUIRE(size.has_value());
    CHECK(size->size == big.size());
    auto back = f.run_on(store::read_all(*s3, "data/big.parquet", big.size()));
    REQUIRE(back.has_value());
    CHECK(*back == big);
    f.aws("s3 cp --only-show-errors " + f.url("mirror", "p/data/big.parquet") + " " + (f.tmp / "big").string());
    CHECK(read_file(f.tmp / "big") == big);

    // 1,050 keys: more than one ListObjectsV2 page of 1,000.
    for (int i = 0; i < 1050; ++i)
        REQUIRE(f.run_on(store::write_all(*s3, "many/k" + std::to_string(i), "x", store::write_mode::replace)));
    std::size_t listed = 0;
    std::function<result<void>(store::list_entry)> count = [&](store::list_entry e) -> result<void> {
        CHECK(e.key.starts_with("many/k"));
        CHECK(e.size == 1);
        ++listed;
        return {};
    };
    REQUIRE(f.run_on(s3->list("many/", count)));
    CHECK(listed == 1050);

    auto missing = f.run_on(s3->stat("absent"));
    REQUIRE(!missing);
    CHECK(missing.error().code == store_errc::not_found);
    auto missing_read = f.run_on(store::read_all(*s3, "absent", 10));
    REQUIRE(!missing_read);
    CHECK(missing_read.error().code == store_errc::not_found);
    INFO(missing_read.error().message);
    CHECK(missing_read.error().message.find("NoSuchKey") != std::string::npos);

    REQUIRE(f.run_on(s3->remove("data/big.parquet")));
    CHECK(f.run_on(s3->stat("data/big.parquet")).error().code == store_errc::not_found);
}

TEST_CASE_TEMPLATE("parts go up several at once, or one by one, and the object is whole and in order", S, on_s3rver, on_rgw) {
    s3_fixture<S> f;
    std::string big(23 * 1024 * 1024 + 5, '\0'); // five parts of 5 MiB, the last short
    for (std::size_t i = 0; i < big.size(); ++i)
        big[i] = static_cast<char>((i * 7 + i / 4096) % 251);
    for (std::size_t parallel : {std::size_t(0), std::size_t(3)}) {
        CAPTURE(parallel);
        auto s3 = f.open(f.url("mirror", "parts/"), 5 * 1024 * 1024, parallel);
        std::string key = "big-" + std::to_string(parallel);
        auto writer = f.run_on(s3->open_writer(key, store::write_mode::create_only));
        REQUIRE(writer.has_value());
        // In the 64 KiB chunks a copy writes, so parts fill and leave while bytes arrive.
        for (std::size_t at = 0; at < big.size(); at += 64 * 1024) {
            auto chunk = std::as_bytes(std::span(big).subspan(at, std::min<std::size_t>(64 * 1024, big.size() - at)));
            REQUIRE(f.run_on((*writer)->write(chunk)));
        }
        CHECK(f.run_on(s3->stat(key)).error().code == store_errc::not_found); // nothing before commit
        auto committed = f.run_on((*writer)->commit());
        REQUIRE_MESSAGE(committed.has_value(), (committed ? "" : committed.error().message));
        auto back = f.run_on(store::read_all(*s3, key, big.size()));
        REQUIRE(back.has_value());
        CHECK(back->size() == big.size());
        CHECK(*back == big);
    }
}

TEST_CASE_TEMPLATE("uploads wait for the memory budget: never more buffers than it holds, every object whole", S,
                   on_s3rver, on_rgw) {
    s3_fixture<S> f;
    constexpr std::size_t part = 5 * 1024 * 1024;
    io::memory_budget memory(2 * part + part / 2); // room for two part buffers, not three
    auto s3 = f.open(f.url("mirror", "budget/"), part, 3);
    // The fixture's settings with the budget: opened again the same way, with it.
    store::s3_store_settings with_budget;
    with_budget.access.creds = {f.access_key(), f.secret_key(), std::nullopt};
    with_budget.access.endpoint = f.endpoint();
    with_budget.access.path_style = true;
    with_budget.allow_plain_http = true;
    with_budget.part_bytes = with_budget.multipart_threshold = part;
    with_budget.parallel_parts = 3;
    with_budget.memory = &memory;
    with_budget.client.memory = &memory; // as open_store sets it: reads draw on it too
    auto opened = store::s3_store::open(f.url("mirror", "budget/"), with_budget);
    REQUIRE(opened.has_value());
    auto& budgeted = **opened;
    // Four uploads of 12 MiB and a small object, all at once, in 64 KiB chunks.
    std::vector<std::string> objects;
    for (int i = 0; i < 4; ++i) {
        std::string bytes(12 * 1024 * 1024 + 7 * i, '\0');
        for (std::size_t at = 0; at < bytes.size(); ++at)
            bytes[at] = static_cast<char>((at * 13 + i) % 251);
        objects.push_back(std::move(bytes));
    }
    objects.push_back(std::string(100 * 1024, 'x')); // under 256 KiB: takes nothing
    std::size_t next = 0, failures = 0;
    std::function<awaitable<void>()> uploader = [&]() -> awaitable<void> {
        while (next < objects.size()) {
            std::size_t const i = next++;
            auto writer = co_await budgeted.open_writer("o" + std::to_string(i), store::write_mode::replace);
            if (!writer) {
                ++failures;
                continue;
            }
            for (std::size_t at = 0; at < objects[i].size(); at += 64 * 1024) {
                auto chunk =
                    std::as_bytes(std::span(objects[i]).subspan(at, std::min<std::size_t>(64 * 1024, objects[i].size() - at)));
                auto wrote = co_await (*writer)->write(chunk);
                failures += wrote ? 0 : 1;
            }
            auto committed = co_await (*writer)->commit();
            failures += committed ? 0 : 1;
        }
    };
    auto all = [&]() -> awaitable<bool> {
        co_await sync::run_workers(objects.size(), uploader);
        co_return true;
    };
    CHECK(f.run_on(all()));
    CHECK(failures == 0);
    CHECK(memory.peak() <= memory.capacity());
    CHECK(memory.peak() >= 2 * part); // two buffers were filling at once: the budget was drawn on
    CHECK(memory.in_use() == 0);      // every grant came back
    for (std::size_t i = 0; i < objects.size(); ++i) {
        auto back = f.run_on(store::read_all(*s3, "o" + std::to_string(i), objects[i].size()));
        REQUIRE(back.has_value());
        CHECK(*back == objects[i]);
    }
    // A GET's read buffers are granted while its body streams, and given back.
    test::budget_watching_sink sink(memory);
    auto read = f.run_on([&]() -> awaitable<result<void>> { co_return co_await budgeted.read("o0", sink); }());
    REQUIRE(read.has_value());
    CHECK(sink.text == objects[0]);
    CHECK(sink.most_granted == 2 * 256 * 1024);
    CHECK(memory.in_use() == 0);
}

TEST_CASE_TEMPLATE("wrong credentials are access denied, and the secret is never in the message", S, on_s3rver, on_rgw) {
    s3_fixture<S> f;
    store::s3_store_settings settings;
    settings.access.creds = {"NOT-A-KEY", "a-very-secret-value", std::nullopt};
    settings.access.endpoint = f.endpoint();
    settings.access.path_style = true;
    settings.allow_plain_http = true;
    auto s3 = store::s3_store::open(f.url("mirror", ""), settings);
    REQUIRE(s3.has_value());
    auto r = f.run_on(store::read_all(**s3, "fdl.json", 100));
    REQUIRE(!r);
    CHECK(r.error().code == store_errc::access_denied);
    CHECK(r.error().message.find("a-very-secret-value") == std::string::npos);
}

TEST_CASE("S3 URLs and endpoints a store refuses") {
    store::s3_store_settings settings;
    settings.access.creds = {"k", "s", std::nullopt};
    for (auto const* bad : {"s3://", "s3://UPPER/x/", "s3://ab/", "s3://bucket/../x/", "https://bucket/"}) {
        CAPTURE(bad);
        auto s3 = store::s3_store::open(bad, settings);
        REQUIRE(!s3);
        CHECK(s3.error().code == store_errc::rejected);
    }
    settings.access.endpoint = "http://127.0.0.1:9000";
    auto plain = store::s3_store::open("s3://bucket/x/", settings);
    REQUIRE(!plain);
    CHECK(plain.error().message.find("plain http://") != std::string::npos);
    settings.access.endpoint.reset();
    auto aws = store::s3_store::open("s3://bucket/x/", settings);
    REQUIRE(aws.has_value());
    CHECK((*aws)->describe() == "s3://bucket/x/");
}
