// One store contract, written once and run against every backend (docs/development.md,
// "Stores"; rclone's fstests): a folder opened as a mirror and as an origin, HTTPS (nginx, test CA)
// and S3 (s3rver and Ceph RGW). A backend skips only what its caps() exclude, and there the call must be
// refused as unsupported. Where a test server cannot honour the contract (s3rver), the
// fixture says so in tests/support/store_backends.hpp, citing the documented limit.
// Test names end in the backend: "store conformance: read<s3 (s3rver)>".

#include "core/store/store.hpp"

#include "core/io/errors.hpp"
#include "tests/support/store_backends.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>

using namespace mirror;
using namespace mirror::test;
using io::store_errc;
using store::write_mode;
using object_map = std::map<std::string, std::uint64_t>;

// Listings and peeks print as text when a check fails, not as "{?}".
template <>
struct doctest::StringMaker<std::map<std::string, std::uint64_t>> {
    static String convert(std::map<std::string, std::uint64_t> const& objects) {
        std::string out = "{";
        for (auto const& [key, size] : objects)
            out += (out.size() > 1 ? ", " : "") + key + ": " + std::to_string(size);
        return (out + "}").c_str();
    }
};
template <>
struct doctest::StringMaker<std::optional<std::string>> {
    static String convert(std::optional<std::string> const& bytes) {
        return bytes ? ("'" + bytes->substr(0, 80) + "'").c_str() : "nullopt";
    }
};

TYPE_TO_STRING_AS("folder mirror", mirror::test::folder_mirror_backend);
TYPE_TO_STRING_AS("in memory (tests)", mirror::test::memory_backend);
TYPE_TO_STRING_AS("folder origin", mirror::test::folder_origin_backend);
TYPE_TO_STRING_AS("https (nginx)", mirror::test::https_backend);
TYPE_TO_STRING_AS("s3 (s3rver)", mirror::test::s3rver_backend);
TYPE_TO_STRING_AS("s3 (Ceph RGW)", mirror::test::rgw_backend);
// Each wrapper the daemon may put around a mirror store (issue 33), over a server that
// honours every condition; the names end as the sanitized run's filter expects.
TYPE_TO_STRING_AS("s3 (throttled, s3rver)", mirror::test::throttled_s3rver_backend);
TYPE_TO_STRING_AS("s3 (throttled, Ceph RGW)", mirror::test::throttled_rgw_backend);
TYPE_TO_STRING_AS("s3 (fault store, Ceph RGW)", mirror::test::faulted_rgw_backend);
TYPE_TO_STRING_AS("s3 (fenced, Ceph RGW)", mirror::test::fenced_rgw_backend);

namespace {

using every_backend =
    std::tuple<folder_mirror_backend, memory_backend, folder_origin_backend, https_backend, s3rver_backend, rgw_backend,
               throttled_s3rver_backend, throttled_rgw_backend, faulted_rgw_backend, fenced_rgw_backend>;

constexpr std::size_t mib = 1024 * 1024;
// s3_store_settings::part_bytes: larger objects go up as a multipart upload.
constexpr std::size_t multipart_threshold = 16 * mib;

/// Bytes with no period a chunk or part boundary could hide a misplaced block behind.
std::string pattern(std::size_t size, std::uint32_t seed) {
    std::string out(size, '\0');
    std::uint32_t x = seed * 2654435761u + 1;
    for (auto& c : out) {
        x = x * 1664525u + 1013904223u; // Numerical Recipes' LCG; the top byte is well mixed
        c = static_cast<char>(x >> 24);
    }
    return out;
}

/// "" when equal, else where they differ (never the bytes themselves: they run to MiB).
std::string difference(std::string const& got, std::string const& want) {
    if (got == want)
        return "";
    auto at = std::mismatch(got.begin(), got.end(), want.begin(), want.end()).first - got.begin();
    return "got " + std::to_string(got.size()) + " bytes, want " + std::to_string(want.size()) +
           ", first difference at byte " + std::to_string(at);
}

/// Collects what a read delivers.
class collecting_sink final : public io::byte_sink {
public:
    awaitable<result<void>> write(std::span<std::byte const> bytes) override {
        ++calls;
        text.append(reinterpret_cast<char const*>(bytes.data()), bytes.size());
        co_return result<void>();
    }
    std::string text;
    int calls = 0;
};

/// Takes the first chunk, then refuses every later one with `failure`.
class failing_sink final : public io::byte_sink {
public:
    explicit failing_sink(error failure) : failure_(std::move(failure)) {}
    awaitable<result<void>> write(std::span<std::byte const>) override {
        if (++calls == 1)
            co_return result<void>();
        co_return failure_;
    }
    int calls = 0;

private:
    error failure_;
};

/// Checks that `r` failed with a store error of one of `codes`, with a message that names
/// `key` (when given) and no signature or credential.
template <class T>
void check_fails(result<T> const& r, std::initializer_list<store_errc> codes, std::string const& key = "") {
    CHECK_FALSE(r.has_value());
    if (r.has_value())
        return;
    auto const& e = r.error();
    INFO("error: " << e.code.message() << ": " << e.message);
    CHECK(e.code.category() == io::store_category());
    CHECK(std::any_of(codes.begin(), codes.end(), [&](store_errc c) { return e.code == c; }));
    if (!key.empty())
        CHECK(e.message.find(key) != std::string::npos);
    for (auto const* secret : {"Signature=", "Credential=", "Authorization"})
        CHECK(e.message.find(secret) == std::string::npos);
}

struct read_outcome {
    result<void> done;
    std::string bytes;
};

read_outcome read_of(store_backend& b, std::string const& key) {
    collecting_sink sink;
    auto done = b.run_on(b.subject().read(key, sink));
    return {std::move(done), std::move(sink.text)};
}

result<store::object_info> stat_of(store_backend& b, std::string const& key) {
    return b.run_on(b.subject().stat(key));
}

/// The listing of `prefix` as key → size; a key listed twice fails the test.
result<object_map> list_of(store_backend& b, std::string const& prefix) {
    object_map out;
    std::function<result<void>(store::list_entry)> note = [&](store::list_entry e) -> result<void> {
        CHECK_MESSAGE(out.emplace(e.key, e.size).second, e.key << " listed twice");
        return {};
    };
    auto done = b.run_on(b.subject().list(prefix, note));
    if (!done)
        return done.error();
    return out;
}

/// Objects below the parent whose path starts with `below`.
object_map objects_under(store_backend& b, std::string const& below) {
    object_map out;
    for (auto const& [path, size] : b.objects())
        if (path.starts_with(below))
            out.emplace(path, size);
    return out;
}

/// Writes `bytes` in chunks of `chunk`; `writer` and `bytes` are the caller's, awaited at once.
awaitable<result<void>> write_in_chunks(store::object_writer& writer, std::string const& bytes, std::size_t chunk) {
    for (std::size_t at = 0; at < bytes.size(); at += chunk) {
        auto piece = std::as_bytes(std::span(bytes.data() + at, std::min(chunk, bytes.size() - at)));
        auto written = co_await writer.write(piece);
        if (!written)
            co_return written;
    }
    co_return result<void>();
}

/// Opens a writer, writes `bytes` and drops it uncommitted inside the coroutine, so that
/// what its destructor starts (S3: aborting the multipart upload) runs on this loop.
awaitable<result<void>> write_and_abandon(store::store& to, std::string key, std::string bytes) {
    auto writer = co_await to.open_writer(key, write_mode::create_only);
    if (!writer)
        co_return writer.error();
    co_return co_await write_in_chunks(**writer, bytes, mib);
}

} // namespace

TEST_CASE_TEMPLATE_DEFINE("store conformance: caps, describe, and what caps exclude is refused", B, caps_contract) {
    B backend;
    store_backend& b = backend;
    auto& s = b.subject();
    INFO("backend: " << s.describe());
    auto caps = s.caps();
    auto expected = b.expected_caps();
    CHECK(caps.can_list == expected.can_list);
    CHECK(caps.can_write == expected.can_write);
    CHECK(caps.create_only == expected.create_only);
    CHECK(caps.conditional_writes == expected.conditional_writes);
    CHECK_MESSAGE(!(caps.create_only && !caps.can_write), "create_only without can_write means nothing");

    auto text = s.describe();
    CHECK(text.find(b.expected_location()) != std::string::npos);
    // s3rver's key id and secret are both "S3RVER"; neither belongs in a description.
    for (std::string secret : {"Authorization", "Credential=", "Signature=", "@", "S3RVER"})
        CHECK_MESSAGE(text.find(secret) == std::string::npos, "describe() holds '" << secret << "'");

    b.seed("root/kept.txt", "kept");
    auto before = b.objects();
    std::function<result<void>(store::list_entry)> ignore = [](store::list_entry) -> result<void> { return {}; };
    if (!caps.can_list)
        check_fails(b.run_on(s.list("", ignore)), {store_errc::unsupported});
    if (!caps.can_write) {
        check_fails(b.run_on(s.open_writer("new.txt", write_mode::replace)), {store_errc::unsupported});
        check_fails(b.run_on(s.open_writer("kept.txt", write_mode::create_only)), {store_errc::unsupported});
        check_fails(b.run_on(s.remove("kept.txt")), {store_errc::unsupported});
        CHECK(b.objects() == before);
    }
}
TEST_CASE_TEMPLATE_APPLY(caps_contract, every_backend);

TEST_CASE_TEMPLATE_DEFINE("store conformance: conditional writes replace only the bytes they name", B,
                          conditional_contract) {
    B backend;
    store_backend& b = backend;
    auto& s = b.subject();
    INFO("backend: " << s.describe());
    if (!s.caps().conditional_writes) {
        check_fails(b.run_on(s.read_tagged("lease", 1024)), {store_errc::unsupported});
        check_fails(b.run_on(s.write_conditional("lease", "one", std::nullopt)), {store_errc::unsupported});
        CHECK(b.peek("root/lease") == std::nullopt);
        return;
    }
    check_fails(b.run_on(s.read_tagged("lease", 1024)), {store_errc::not_found}, "lease");
    auto first = b.run_on(s.write_conditional("lease", "one", std::nullopt));
    REQUIRE_MESSAGE(first.has_value(), first.error().message);
    CHECK(b.peek("root/lease") == std::optional<std::string>("one"));
    auto read = b.run_on(s.read_tagged("lease", 1024));
    REQUIRE_MESSAGE(read.has_value(), read.error().message);
    CHECK(read->bytes == "one");
    CHECK(read->tag == *first);
    check_fails(b.run_on(s.read_tagged("lease", 2)), {store_errc::too_large}, "lease");
    auto second = b.run_on(s.write_conditional("lease", "two", read->tag));
    REQUIRE_MESSAGE(second.has_value(), second.error().message);
    CHECK(*second != *first);
    CHECK(b.peek("root/lease") == std::optional<std::string>("two"));
    if (!b.server_honours_conditions())
        return; // s3rver: the write goes through whatever its condition (store_backends.hpp)
    // Another writer went first: neither a create nor a stale tag replaces its bytes.
    check_fails(b.run_on(s.write_conditional("lease", "three", std::nullopt)), {store_errc::conflict}, "lease");
    check_fails(b.run_on(s.write_conditional("lease", "three", *first)), {store_errc::conflict}, "lease");
    CHECK(b.peek("root/lease") == std::optional<std::string>("two"));
}
TEST_CASE_TEMPLATE_APPLY(conditional_contract, every_backend);

TEST_CASE_TEMPLATE_DEFINE("store conformance: stat", B, stat_contract) {
    B backend;
    store_backend& b = backend;
    INFO("backend: " << b.subject().describe());
    b.seed("root/s/five.txt", "12345");
    b.seed("root/s/empty", "");
    b.seed("root/s/deeper/three", "abc");

    CHECK(stat_of(b, "s/five.txt").value().size == 5);
    CHECK(stat_of(b, "s/empty").value().size == 0);
    CHECK(stat_of(b, "s/deeper/three").value().size == 3);
    check_fails(stat_of(b, "s/absent"), {store_errc::not_found}, "s/absent");
    check_fails(stat_of(b, "no-such-folder/x"), {store_errc::not_found}, "no-such-folder/x");
    // Not objects: a folder, and a key below an object. Any store error but success.
    check_fails(stat_of(b, "s"), {store_errc::not_found, store_errc::not_a_file, store_errc::access_denied});
    check_fails(stat_of(b, "s/five.txt/x"), {store_errc::not_found, store_errc::not_a_file});
}
TEST_CASE_TEMPLATE_APPLY(stat_contract, every_backend);

TEST_CASE_TEMPLATE_DEFINE("store conformance: read streams exact bytes, and a sink's error stops it", B,
                          read_contract) {
    B backend;
    store_backend& b = backend;
    auto& s = b.subject();
    INFO("backend: " << s.describe());
    std::string small = "hello, store\n";
    std::string big = pattern(3 * mib + 123, 1);
    b.seed("root/r/small.txt", small);
    b.seed("root/r/empty", "");
    b.seed("root/r/big.bin", big);

    auto got = read_of(b, "r/small.txt");
    REQUIRE(got.done.has_value());
    CHECK(got.bytes == small);
    got = read_of(b, "r/empty");
    REQUIRE(got.done.has_value());
    CHECK(got.bytes.empty());
    got = read_of(b, "r/big.bin");
    REQUIRE(got.done.has_value());
    CHECK_MESSAGE(got.bytes == big, difference(got.bytes, big));

    got = read_of(b, "r/absent");
    check_fails(got.done, {store_errc::not_found}, "r/absent");
    CHECK(got.bytes.empty());
    got = read_of(b, "no-such-folder/x");
    check_fails(got.done, {store_errc::not_found}, "no-such-folder/x");
    CHECK(got.bytes.empty());

    // The sink's own error is returned as it is, and nothing is written to the sink after
    // it: not by a retry, not by a resumed read. Once with an error from outside the store
    // vocabulary, once with one a retry would normally cure.
    // (http::client::fetch once retried a transient error from the sink like a network
    // failure, resuming into the sink that refused.)
    for (auto const& failure : {error{make_error_code(boost::system::errc::operation_canceled), "sink: stop here"},
                                make_error(store_errc::transient, "sink: mirror busy")}) {
        CAPTURE(failure.message);
        failing_sink sink(failure);
        auto stopped = b.run_on(s.read("r/big.bin", sink));
        REQUIRE_FALSE(stopped.has_value());
        CHECK(stopped.error().code == failure.code);
        CHECK(stopped.error().message == failure.message);
        CHECK(sink.calls == 2);
    }
    // And the store still serves reads afterwards.
    got = read_of(b, "r/small.txt");
    CHECK(got.done.has_value());
    CHECK(got.bytes == small);

    // read_all's limit, and read_if_present.
    check_fails(b.run_on(store::read_all(s, "r/small.txt", small.size() - 1)), {store_errc::too_large});
    CHECK(b.run_on(store::read_all(s, "r/small.txt", small.size())).value() == small);
    check_fails(b.run_on(store::read_all(s, "r/big.bin", mib)), {store_errc::too_large});
    check_fails(b.run_on(store::read_all(s, "r/absent", mib)), {store_errc::not_found});
    CHECK(b.run_on(store::read_if_present(s, "r/absent", mib)).value() == std::nullopt);
    CHECK(b.run_on(store::read_if_present(s, "no-such-folder/x", mib)).value() == std::nullopt);
    CHECK(b.run_on(store::read_if_present(s, "r/small.txt", mib)).value() == small);
    check_fails(b.run_on(store::read_if_present(s, "r/big.bin", mib)), {store_errc::too_large});
}
TEST_CASE_TEMPLATE_APPLY(read_contract, every_backend);

TEST_CASE_TEMPLATE_DEFINE("store conformance: hostile keys are refused and never reach outside the root", B,
                          keys_contract) {
    B backend;
    store_backend& b = backend;
    auto& s = b.subject();
    INFO("backend: " << s.describe());
    // store.hpp: backends refuse `.`/`..`/empty segments themselves, as a second line.
    // What each hostile key would name if a backend (or a server) resolved it as a path:
    // outside the root for the first two, a different object inside it for the others.
    // (http_store and s3_store once sent such keys as they were: nginx and s3rver resolve
    // the dots, so "../x" read, replaced or deleted the object outside the root.)
    b.seed("x", "outside: x");
    b.seed("b", "outside: b");
    b.seed("root/abs", "inside: abs");
    b.seed("root/a/b", "inside: a/b");
    auto before = b.objects();

    std::vector<std::string> hostile{"../x", "a/../../b", "/abs", "a//b", "a/./b", "",
                                     ".",    "..",        "./a/b", "a/b/", "a/"};
    for (auto const& key : hostile) {
        CAPTURE(key);
        check_fails(stat_of(b, key), {store_errc::rejected, store_errc::not_found});
        auto got = read_of(b, key);
        check_fails(got.done, {store_errc::rejected, store_errc::not_found});
        CHECK_MESSAGE(got.bytes.empty(), "read " << got.bytes.size() << " bytes: '" << got.bytes.substr(0, 40) << "'");
        if (s.caps().can_write) {
            check_fails(b.run_on(store::write_all(s, key, "hostile", write_mode::replace)),
                        {store_errc::rejected, store_errc::not_found});
            check_fails(b.run_on(s.remove(key)), {store_errc::rejected, store_errc::not_found});
        }
    }
    if (s.caps().can_list) {
        for (std::string prefix : {"../", "a/../../", "/", "./", "a//"}) {
            CAPTURE(prefix);
            auto listed = list_of(b, prefix);
            CHECK_MESSAGE((!listed || listed->empty()), "a hostile prefix listed objects");
            if (!listed)
                check_fails(listed, {store_errc::rejected, store_errc::not_found});
        }
    }
    // Nothing anywhere below the parent was created, changed or deleted.
    CHECK(b.objects() == before);
    CHECK(b.peek("x") == "outside: x");
    CHECK(b.peek("b") == "outside: b");
}
TEST_CASE_TEMPLATE_APPLY(keys_contract, every_backend);

TEST_CASE_TEMPLATE_DEFINE("store conformance: list", B, list_contract) {
    B backend;
    store_backend& b = backend;
    auto& s = b.subject();
    INFO("backend: " << s.describe());
    if (!s.caps().can_list)
        return; // caps exclude it; the caps test checks that list() is refused
    b.seed("outside.txt", "not in the store");
    b.seed("root/l/a.txt", "a");
    b.seed("root/l/empty", "");
    b.seed("root/l/sub/b.txt", "bb");
    b.seed("root/l/sub/deeper/c.txt", "ccc");
    b.seed("root/ab/x", "1");
    b.seed("root/abc/x", "22");

    object_map l{{"l/a.txt", 1}, {"l/empty", 0}, {"l/sub/b.txt", 2}, {"l/sub/deeper/c.txt", 3}};
    CHECK(list_of(b, "l/").value() == l);
    CHECK(list_of(b, "l/sub/deeper/").value() == object_map{{"l/sub/deeper/c.txt", 3}});
    CHECK(list_of(b, "ab/").value() == object_map{{"ab/x", 1}}); // a prefix is a folder: not abc/
    CHECK(list_of(b, "absent/").value().empty());
    auto all = l;
    all.insert({{"ab/x", 1}, {"abc/x", 2}});
    CHECK(list_of(b, "").value() == all);
    for (auto const& [key, size] : all)
        CHECK_MESSAGE(stat_of(b, key).value().size == size, key);

    // The callback's error stops the listing and comes back as it is.
    int calls = 0;
    std::function<result<void>(store::list_entry)> refuse = [&](store::list_entry) -> result<void> {
        ++calls;
        return make_error(boost::system::errc::operation_canceled, "listing: stop here");
    };
    auto stopped = b.run_on(s.list("l/", refuse));
    REQUIRE_FALSE(stopped.has_value());
    CHECK(stopped.error().message == "listing: stop here");
    CHECK(calls == 1);
}
TEST_CASE_TEMPLATE_APPLY(list_contract, every_backend);

TEST_CASE_TEMPLATE_DEFINE("store conformance: a listing of more than 1000 objects is complete", B,
                          long_list_contract) {
    B backend;
    store_backend& b = backend;
    auto& s = b.subject();
    INFO("backend: " << s.describe());
    if (!s.caps().can_list)
        return; // caps exclude it
    // 1,001 keys: one past a ListObjectsV2 page. Zero-padded, so that they sort in the
    // order s3rver walks its folder (docs/design.md: it loses keys otherwise).
    object_map want;
    for (int i = 0; i <= 1000; ++i) {
        char key[16];
        std::snprintf(key, sizeof key, "many/k%04d", i);
        b.seed(std::string("root/") + key, "x");
        want[key] = 1;
    }
    b.seed("root/many-more/k", "not under many/");
    CHECK(list_of(b, "many/").value() == want);
}
TEST_CASE_TEMPLATE_APPLY(long_list_contract, every_backend);

TEST_CASE_TEMPLATE_DEFINE("store conformance: writers show an object only when committed, and whole", B,
                          writer_contract) {
    B backend;
    store_backend& b = backend;
    auto& s = b.subject();
    INFO("backend: " << s.describe());
    if (!s.caps().can_write)
        return; // caps exclude it; the caps test checks that open_writer() is refused
    b.seed("root/w/taken", "old bytes");
    b.seed("root/w/replaced", "old bytes");

    SUBCASE("nothing is visible before commit, all of it after") {
        auto writer = b.run_on(s.open_writer("w/new.txt", write_mode::create_only));
        REQUIRE(writer.has_value());
        std::string bytes = "fresh bytes";
        REQUIRE(b.run_on(write_in_chunks(**writer, bytes, 4)));
        check_fails(stat_of(b, "w/new.txt"), {store_errc::not_found}, "w/new.txt");
        check_fails(read_of(b, "w/new.txt").done, {store_errc::not_found});
        if (s.caps().can_list)
            CHECK(list_of(b, "w/").value() == object_map{{"w/taken", 9}, {"w/replaced", 9}});
        REQUIRE(b.run_on((*writer)->commit()));
        CHECK(stat_of(b, "w/new.txt").value().size == bytes.size());
        CHECK(read_of(b, "w/new.txt").bytes == bytes);
        CHECK(b.peek("root/w/new.txt") == bytes);
    }
    SUBCASE("a writer dropped uncommitted leaves nothing: empty, small, and past the multipart threshold") {
        auto before = b.objects();
        for (std::size_t size : {std::size_t(0), std::size_t(100), multipart_threshold + mib}) {
            CAPTURE(size);
            REQUIRE(b.run_on(write_and_abandon(s, "w/dropped.bin", pattern(size, 2))));
            // S3: the abort was sent (s3rver answers it 405, docs/design.md); what counts
            // here is that no object appears.
            check_fails(stat_of(b, "w/dropped.bin"), {store_errc::not_found});
            CHECK(b.objects() == before);
        }
    }
    SUBCASE("create_only refuses a taken key and keeps its bytes; it creates a new one") {
        auto lost = b.run_on(store::write_all(s, "w/taken", "new bytes", write_mode::create_only));
        if (b.server_honours_create_only()) {
            check_fails(lost, {store_errc::already_exists}, "w/taken");
            CHECK(read_of(b, "w/taken").bytes == "old bytes");
        } else {
            // s3rver 3.7.1 ignores If-None-Match on PUT and overwrites (docs/design.md,
            // "s3rver"); the store still sends it. Only the server's answer is skipped.
            MESSAGE("skipped for this server: it does not honour create-only (If-None-Match)");
        }
        REQUIRE(b.run_on(store::write_all(s, "w/created", "created", write_mode::create_only)));
        CHECK(read_of(b, "w/created").bytes == "created");
        REQUIRE(b.run_on(store::write_all(s, "w/made/in/new/folders", "deep", write_mode::create_only)));
        CHECK(read_of(b, "w/made/in/new/folders").bytes == "deep");
    }
    SUBCASE("replace overwrites, and creates an absent key") {
        REQUIRE(b.run_on(store::write_all(s, "w/replaced", "newer bytes!", write_mode::replace)));
        CHECK(stat_of(b, "w/replaced").value().size == 12);
        CHECK(read_of(b, "w/replaced").bytes == "newer bytes!");
        REQUIRE(b.run_on(store::write_all(s, "w/fresh", "", write_mode::replace)));
        CHECK(stat_of(b, "w/fresh").value().size == 0);
        auto empty = read_of(b, "w/fresh");
        CHECK(empty.done.has_value());
        CHECK(empty.bytes.empty());
    }
    SUBCASE("a large object (past the multipart threshold) round-trips byte for byte") {
        std::string big = pattern(20 * mib + 7, 3);
        auto writer = b.run_on(s.open_writer("w/big.bin", write_mode::create_only));
        REQUIRE(writer.has_value());
        REQUIRE(b.run_on(write_in_chunks(**writer, big, mib)));
        // S3 has sent a part by now; it stays invisible until the upload completes.
        check_fails(stat_of(b, "w/big.bin"), {store_errc::not_found});
        REQUIRE(b.run_on((*writer)->commit()));
        writer->reset();
        CHECK(stat_of(b, "w/big.bin").value().size == big.size());
        auto back = read_of(b, "w/big.bin");
        REQUIRE(back.done.has_value());
        CHECK_MESSAGE(back.bytes == big, difference(back.bytes, big));
        CHECK(objects_under(b, "root/w/big.bin") == object_map{{"root/w/big.bin", big.size()}});
    }
}
TEST_CASE_TEMPLATE_APPLY(writer_contract, every_backend);

TEST_CASE_TEMPLATE_DEFINE("store conformance: remove", B, remove_contract) {
    B backend;
    store_backend& b = backend;
    auto& s = b.subject();
    INFO("backend: " << s.describe());
    if (!s.caps().can_write)
        return; // caps exclude it; the caps test checks that remove() is refused
    b.seed("root/d/gone", "bye");
    b.seed("root/d/stays", "still here");
    REQUIRE(b.run_on(s.remove("d/gone")));
    check_fails(stat_of(b, "d/gone"), {store_errc::not_found}, "d/gone");
    CHECK(b.peek("root/d/gone") == std::nullopt);
    CHECK(b.peek("root/d/stays") == "still here");
    // A removed key can be created again, create-only.
    REQUIRE(b.run_on(store::write_all(s, "d/gone", "back", write_mode::create_only)));
    auto back = read_of(b, "d/gone");
    // Once seen failing on s3rver under the sanitized run, with no error shown: say it.
    CHECK_MESSAGE(back.done.has_value(), (back.done ? "" : back.done.error().message));
    CHECK(back.bytes == "back");

    for (std::string missing : {"d/absent", "no-such-folder/x"}) {
        CAPTURE(missing);
        auto removed = b.run_on(s.remove(missing));
        if (b.remove_reports_missing())
            check_fails(removed, {store_errc::not_found}, missing);
        else // S3 answers 204 either way: docs/mirroring-rules.md, "A delete of a missing key succeeds"
            CHECK(removed.has_value());
    }
}
TEST_CASE_TEMPLATE_APPLY(remove_contract, every_backend);
