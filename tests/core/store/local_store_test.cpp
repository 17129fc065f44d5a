#include "core/store/local_store.hpp"

#include "core/io/errors.hpp"
#include "tests/support/budget_watching_sink.hpp"
#include "tests/support/publisher.hpp"
#include "tests/support/temp_dir.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <doctest/doctest.h>

#include <fcntl.h>
#include <map>
#include <unistd.h>

using namespace mirror;
using namespace mirror::test;
namespace fs = std::filesystem;

namespace {

template <class T>
T wait(awaitable<T> work) {
    net::io_context io(1);
    std::optional<T> out;
    net::co_spawn(io, std::move(work), [&](std::exception_ptr e, T value) {
        if (e)
            std::rethrow_exception(e);
        out = std::move(value);
    });
    io.run();
    return std::move(*out);
}

std::unique_ptr<store::local_store> open(fs::path const& root, bool writable) {
    auto s = store::local_store::open(root, writable);
    REQUIRE(s);
    return std::move(*s);
}

result<std::string> read(store::store& s, std::string key) {
    return wait(store::read_all(s, std::move(key), 1 << 20));
}

result<void> put(store::store& s, std::string key, std::string bytes, store::write_mode mode) {
    return wait(store::write_all(s, std::move(key), std::move(bytes), mode));
}

} // namespace

TEST_CASE("local store: written objects read back, and create_only never overwrites") {
    temp_dir tmp;
    auto s = open(tmp / "m", true);
    CHECK(s->caps().can_list);
    CHECK(s->caps().create_only);
    REQUIRE(put(*s, "a/b/c.txt", "first", store::write_mode::create_only));
    CHECK(read(*s, "a/b/c.txt").value() == "first");
    auto again = put(*s, "a/b/c.txt", "second", store::write_mode::create_only);
    REQUIRE(!again);
    CHECK(again.error().code == io::store_errc::already_exists);
    CHECK(read(*s, "a/b/c.txt").value() == "first");
    REQUIRE(put(*s, "a/b/c.txt", "third", store::write_mode::replace));
    CHECK(read(*s, "a/b/c.txt").value() == "third");
    CHECK(wait(s->stat("a/b/c.txt")).value().size == 5);
}

TEST_CASE("local store: an uncommitted writer leaves nothing under the key or in listings") {
    temp_dir tmp;
    auto s = open(tmp / "m", true);
    {
        auto writer = wait(s->open_writer("x/y.bin", store::write_mode::create_only));
        REQUIRE(writer);
        std::string bytes = "partial";
        REQUIRE(wait((*writer)->write(std::as_bytes(std::span(bytes.data(), bytes.size())))));
        auto missing = wait(s->stat("x/y.bin"));
        REQUIRE(!missing);
        CHECK(missing.error().code == io::store_errc::not_found);
    } // destroyed without commit
    std::vector<std::string> keys;
    REQUIRE(wait(s->list("", [&](store::list_entry e) -> result<void> {
        keys.push_back(e.key);
        return {};
    })));
    CHECK(keys.empty());
    CHECK(!fs::exists(tmp / "m" / "x" / "y.bin"));
}

TEST_CASE("local store: symbolic links are refused, not followed") {
    temp_dir tmp;
    write_file(tmp / "secret", "outside");
    write_file(tmp / "repo" / "real.txt", "inside");
    fs::create_symlink(tmp / "secret", tmp / "repo" / "link.txt");
    fs::create_directories(tmp / "repo" / "d");
    fs::create_directory_symlink(tmp.path(), tmp / "repo" / "d" / "up");
    auto s = open(tmp / "repo", false);
    auto linked = read(*s, "link.txt");
    REQUIRE(!linked);
    CHECK(linked.error().code == io::store_errc::not_a_file);
    CHECK(linked.error().message.find("symbolic link") != std::string::npos);
    auto through = read(*s, "d/up/secret");
    REQUIRE(!through);
    CHECK(through.error().code == io::store_errc::not_a_file);
    auto st = wait(s->stat("link.txt"));
    REQUIRE(!st);
    CHECK(st.error().code == io::store_errc::not_a_file);
    std::map<std::string, std::uint64_t> listed;
    REQUIRE(wait(s->list("", [&](store::list_entry e) -> result<void> {
        listed.emplace(e.key, e.size);
        return {};
    })));
    CHECK(listed == std::map<std::string, std::uint64_t>{{"real.txt", 6}});
}

TEST_CASE("local store: unsafe keys are refused") {
    temp_dir tmp;
    auto s = open(tmp / "m", true);
    for (std::string key : {"../x", "a/../../x", "a//b", "./a", "a/", ""}) {
        auto r = put(*s, key, "x", store::write_mode::replace);
        REQUIRE_MESSAGE(!r, key);
        CHECK(r.error().code == io::store_errc::rejected);
    }
    CHECK(!fs::exists(tmp / "x"));
}

TEST_CASE("local store: a read-only store refuses writes, absent keys are not_found") {
    temp_dir tmp;
    fs::create_directories(tmp / "o");
    auto s = open(tmp / "o", false);
    CHECK(!s->caps().can_write);
    auto w = put(*s, "a", "x", store::write_mode::replace);
    REQUIRE(!w);
    CHECK(w.error().code == io::store_errc::unsupported);
    auto r = read(*s, "nothing/here");
    REQUIRE(!r);
    CHECK(r.error().code == io::store_errc::not_found);
    auto removed = wait(s->remove("a"));
    CHECK(!removed);
    CHECK(!store::local_store::open(tmp / "absent", false));
}

TEST_CASE("local store: remove deletes, and a second remove is not_found") {
    temp_dir tmp;
    auto s = open(tmp / "m", true);
    REQUIRE(put(*s, "v/f", "x", store::write_mode::create_only));
    REQUIRE(wait(s->remove("v/f")));
    auto again = wait(s->remove("v/f"));
    REQUIRE(!again);
    CHECK(again.error().code == io::store_errc::not_found);
}

TEST_CASE("local store: read_all refuses objects past its limit") {
    temp_dir tmp;
    auto s = open(tmp / "m", true);
    REQUIRE(put(*s, "big", std::string(5000, 'x'), store::write_mode::create_only));
    auto r = wait(store::read_all(*s, "big", 4096));
    REQUIRE(!r);
    CHECK(r.error().code == io::store_errc::too_large);
}

TEST_CASE("local store: a large read's buffer is granted from the memory budget, and a spent budget reads in small chunks") {
    temp_dir tmp;
    std::string big(3 * 1024 * 1024 + 5, '\0');
    for (std::size_t i = 0; i < big.size(); ++i)
        big[i] = static_cast<char>(i * 31 + i / 8192);
    write_file(tmp / "big.bin", big);
    write_file(tmp / "small.bin", big.substr(0, 60 * 1024));
    auto s = open(tmp.path(), false);

    auto read_watched = [&](io::memory_budget& budget, std::string key) {
        s->set_memory(&budget);
        budget_watching_sink sink(budget);
        auto done = wait([&]() -> awaitable<result<void>> { co_return co_await s->read(key, sink); }());
        REQUIRE_MESSAGE(done.has_value(), (done ? "" : done.error().message));
        return sink;
    };
    SUBCASE("room in the budget: 1 MiB chunks, granted while the file streams") {
        io::memory_budget budget(64 * 1024 * 1024);
        auto sink = read_watched(budget, "big.bin");
        CHECK(sink.text == big);
        CHECK(sink.largest_chunk == 1024 * 1024);
        CHECK(sink.most_granted == 1024 * 1024);
        CHECK(budget.in_use() == 0);
    }
    SUBCASE("a budget without room: the whole file still, in 64 KiB chunks, nothing granted") {
        io::memory_budget budget(1024 * 1024); // half of it is less than the 1 MiB buffer
        auto sink = read_watched(budget, "big.bin");
        CHECK(sink.text == big);
        CHECK(sink.largest_chunk <= 64 * 1024);
        CHECK(budget.peak() == 0);
    }
    SUBCASE("a small file never asks the budget") {
        io::memory_budget budget(64 * 1024 * 1024);
        auto sink = read_watched(budget, "small.bin");
        CHECK(sink.text == big.substr(0, 60 * 1024));
        CHECK(budget.peak() == 0);
    }
}
