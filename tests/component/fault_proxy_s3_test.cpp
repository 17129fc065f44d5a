// Faults between fdl-mirror and an S3 mirror, each case against s3rver and Ceph RGW: the
// loopback fault proxy breaks chosen exchanges, and each fault is retried or refused as
// specified, with nothing partial or unverified ever visible in the mirror, read from
// behind the proxy (s3rver's folder, RGW's API).

#include "tests/component/fault_proxy_helpers.hpp"
#include "tests/support/rgw.hpp"

#include <fstream>
#include <functional>
#include <map>
#include <span>
#include <type_traits>

using namespace mirror;
using namespace mirror::test;
using namespace std::chrono_literals;
using io::store_errc;
namespace fs = std::filesystem;

TEST_SUITE_BEGIN("fault_proxy");

namespace {

/// s3rver, which ignores If-None-Match: * (the proxy gives S3's 412 for it) and takes parts
/// of any size; what it holds is read from its folder, behind its API.
struct s3rver_upstream {
    s3rver_server server{{.buckets = {"mirror"}}};
    static constexpr bool emulate_create_only = true;
    static constexpr std::size_t small_part = 1024;
    std::uint16_t upstream_port() const { return server.port(); }
    std::string access_key() const { return std::string(s3rver_server::access_key_id); }
    std::string secret_key() const { return std::string(s3rver_server::secret_access_key); }

    void copy_objects(std::string const& prefix, fs::path const& out, event_loop&) {
        fs::path root = server.data_dir() / "mirror" / prefix;
        constexpr std::string_view suffix = "._S3rver_object";
        if (fs::exists(root))
            for (auto const& e : fs::recursive_directory_iterator(root)) {
                std::string name = e.path().filename().string();
                if (!e.is_regular_file() || !name.ends_with(suffix))
                    continue;
                fs::path key = fs::relative(e.path().parent_path(), root) / name.substr(0, name.size() - suffix.size());
                fs::create_directories((out / key).parent_path());
                fs::copy_file(e.path(), out / key);
            }
    }
};

/// Ceph RGW, which answers create-only PUTs itself and wants parts of 5 MiB but the last;
/// what it holds is read through its API, straight (not through the proxy), all at once.
struct rgw_upstream {
    rgw_server& server = rgw_server::shared();
    std::string bucket = server.fresh_bucket("mirror");
    static constexpr bool emulate_create_only = false;
    static constexpr std::size_t small_part = 5 * 1024 * 1024;
    std::uint16_t upstream_port() const { return server.port(); }
    std::string access_key() const { return server.access_key_id(); }
    std::string secret_key() const { return server.secret_access_key(); }

    void copy_objects(std::string const& prefix, fs::path const& out, event_loop& run_on) {
        store::s3_store_settings settings;
        settings.access.creds = {access_key(), secret_key(), std::nullopt};
        settings.access.endpoint = server.endpoint();
        settings.access.path_style = true;
        settings.allow_plain_http = true;
        auto direct = store::s3_store::open("s3://mirror/" + prefix, settings);
        REQUIRE(direct.has_value());
        std::vector<std::string> keys;
        std::function<result<void>(store::list_entry)> note = [&](store::list_entry e) -> result<void> {
            keys.push_back(e.key);
            return {};
        };
        REQUIRE(run_on((*direct)->list("", note)));
        // Read them all at once: one at a time costs a round trip each.
        std::vector<std::optional<std::string>> bytes(keys.size());
        for (std::size_t i = 0; i < keys.size(); ++i)
            net::co_spawn(run_on.io, store::read_if_present(**direct, keys[i], 64 << 20),
                          [&bytes, i](std::exception_ptr, result<std::optional<std::string>> got) {
                              if (got)
                                  bytes[i] = std::move(*got);
                          });
        run_on.io.restart();
        run_on.io.run();
        for (std::size_t i = 0; i < keys.size(); ++i) {
            REQUIRE_MESSAGE(bytes[i].has_value(), keys[i]);
            fs::create_directories((out / keys[i]).parent_path());
            std::ofstream(out / keys[i], std::ios::binary) << *bytes[i];
        }
    }
};

/// A sample repository, an S3 mirror in the upstream server behind the proxy.
template <class Upstream>
struct s3_behind_proxy : Upstream {
    temp_dir tmp;
    publisher origin{tmp / "origin"};
    sample_repo sample = publish_sample(origin);
    fault_proxy proxy{{.upstream_port = this->upstream_port(), .emulate_create_only = Upstream::emulate_create_only}};
    event_loop run_on;
    std::unique_ptr<store::store> from = open_folder(tmp / "origin", false);
    int views = 0;

    /// The mirror at s3://mirror/PREFIX through the proxy; objects past `threshold` (by
    /// default `part_bytes`) go up in parts of `part_bytes`.
    std::unique_ptr<store::s3_store> open(std::string const& prefix, std::size_t part_bytes = 16 << 20,
                                          std::size_t threshold = 0) {
        store::s3_store_settings settings;
        settings.access.creds = {this->access_key(), this->secret_key(), std::nullopt};
        settings.access.endpoint = proxy.endpoint();
        settings.access.path_style = true;
        settings.allow_plain_http = true;
        settings.client = quick_client();
        settings.multipart_threshold = threshold ? threshold : part_bytes;
        settings.part_bytes = part_bytes;
        auto opened = store::s3_store::open("s3://mirror/" + prefix, settings);
        REQUIRE_MESSAGE(opened.has_value(), (opened ? "" : opened.error().message));
        return std::move(*opened);
    }

    sync::sync_report sync_to(store::store& mirror) { return run_on(sync::run_sync(*from, mirror, {}, nullptr)); }

    /// The objects under `prefix` as the server holds them, copied into a new folder: what
    /// any reader of the bucket would get.
    fs::path view(std::string const& prefix) {
        fs::path out = tmp / ("view-" + std::to_string(++views));
        fs::create_directories(out);
        this->copy_objects(prefix, out, run_on);
        return out;
    }

    /// Requests recorded from index `since` on, one per line, for messages.
    std::string log_since(std::size_t since) const {
        auto all = proxy.requests();
        std::string out;
        for (std::size_t i = since; i < all.size(); ++i)
            out += std::to_string(i + 1) + " " + shown(all[i]) + " -> " + std::to_string(all[i].status) + "\n";
        return out;
    }
};

using on_s3rver = s3_behind_proxy<s3rver_upstream>;

} // namespace

TYPE_TO_STRING_AS("s3rver", s3_behind_proxy<s3rver_upstream>);
TYPE_TO_STRING_AS("Ceph RGW", s3_behind_proxy<rgw_upstream>);

TEST_CASE_FIXTURE(on_s3rver, "the proxy answers a create-only PUT of a key s3rver has with S3's 412") {
    std::string url = proxy.url() + "mirror/anonymous.txt";
    auto put = [&](std::string const& headers) {
        return curl("-i -X PUT --data-binary first " + headers + " " + url).out;
    };
    CHECK(put("-H 'If-None-Match: *'").starts_with("HTTP/1.1 200"));
    auto taken = put("-H 'If-None-Match: *'");
    CHECK(taken.starts_with("HTTP/1.1 412"));
    CHECK(body_of(taken).find("<Code>PreconditionFailed</Code>") != std::string::npos);
    CHECK(put("").starts_with("HTTP/1.1 200")); // an unconditional PUT still replaces
}

// One s3rver for every case (each starts in a second): each case has its own key.
TEST_CASE_TEMPLATE("S3 errors through the proxy are classified by their <Code>, and retried or not", F, s3_behind_proxy<s3rver_upstream>, s3_behind_proxy<rgw_upstream>) {
    F f;
    auto s3 = f.open("p/");
    std::size_t keys = 0;
    std::string key; // the case's object, "k1.txt"…, holding "alpha"
    auto next_key = [&] {
        key = "k" + std::to_string(++keys) + ".txt";
        REQUIRE(f.run_on(store::write_all(*s3, key, "alpha", store::write_mode::create_only)));
        return "/mirror/p/" + key;
    };
    auto read = [&] { return f.run_on(store::read_all(*s3, key, 100)); };

    { // SlowDown 503 and InternalError 500 are retried
        auto target = next_key();
        f.proxy.fail_matching("GET", target, s3_error(503, "SlowDown"), 2);
        f.proxy.fail_matching("GET", target, s3_error(500, "InternalError"), 2);
        CHECK(read().value() == "alpha");
        CHECK(f.proxy.count("GET", target) == 5);
    }
    { // SlowDown until the attempts run out is transient
        auto target = next_key();
        f.proxy.fail_matching("GET", target, s3_error(503, "SlowDown"), 100);
        auto r = read();
        REQUIRE(!r);
        CHECK(r.error().code == store_errc::transient);
        CHECK(f.proxy.count("GET", target) == 5);
        // s3_error.hpp: the message names S3's code and message, here after the retries too.
        INFO(r.error().message);
        CHECK(r.error().message.find("SlowDown") != std::string::npos);
    }
    { // AccessDenied 403 is final at once
        auto target = next_key();
        f.proxy.fail_matching("GET", target, s3_error(403, "AccessDenied"));
        auto r = read();
        REQUIRE(!r);
        CHECK(r.error().code == store_errc::access_denied);
        CHECK(f.proxy.count("GET", target) == 1);
    }
    { // NoSuchKey 404 is not_found, even for a key that is there
        auto target = next_key();
        f.proxy.fail_matching("HEAD", target, s3_error(404, "NoSuchKey"));
        auto r = f.run_on(s3->stat(key));
        REQUIRE(!r);
        CHECK(r.error().code == store_errc::not_found);
        CHECK(f.proxy.count("HEAD", target) == 1);
    }
    { // PreconditionFailed 412 on a create-only PUT is already_exists, and nothing is written
        f.proxy.fail_matching("PUT", "/mirror/p/b.txt", s3_error(412, "PreconditionFailed"));
        auto r = f.run_on(store::write_all(*s3, "b.txt", "beta", store::write_mode::create_only));
        REQUIRE(!r);
        CHECK(r.error().code == store_errc::already_exists);
        CHECK(f.proxy.count("PUT", "/mirror/p/b.txt") == 1);
        CHECK(f.run_on(s3->stat("b.txt")).error().code == store_errc::not_found);
    }
    { // the f.proxy gives S3's create-only answer, which s3rver does not
        next_key();
        auto again = f.run_on(store::write_all(*s3, key, "other", store::write_mode::create_only));
        REQUIRE(!again);
        CHECK(again.error().code == store_errc::already_exists);
        CHECK(f.proxy.requests().back().status == 412);
        CHECK(read().value() == "alpha");
        CHECK(f.run_on(store::write_all(*s3, key, "replaced", store::write_mode::replace)));
        CHECK(read().value() == "replaced");
    }
}

TEST_CASE_TEMPLATE("an upload whose completion fails after a 200 is not visible, and is aborted", F, s3_behind_proxy<s3rver_upstream>, s3_behind_proxy<rgw_upstream>) {
    F f;
    constexpr std::size_t part = std::remove_reference_t<decltype(f)>::small_part;
    auto s3 = f.open("p/", part); // three parts, the last one short
    std::string bytes(2 * part + part / 2, 'm');
    // S3 may answer CompleteMultipartUpload 200 and put an <Error> in the body.
    auto error_in_200 = s3_error(500, "InternalError");
    error_in_200.status = 200;
    f.proxy.fail_matching("POST", "uploadId=", error_in_200);
    auto r = f.run_on(store::write_all(*s3, "m.bin", bytes, store::write_mode::create_only));
    INFO(f.log_since(0));
    REQUIRE(!r);
    CHECK(r.error().code == store_errc::transient);
    CHECK(f.proxy.count("PUT", "partNumber=") == 3);
    CHECK(f.proxy.count("DELETE", "uploadId=") == 1); // aborted: no orphan parts
    CHECK(f.run_on(s3->stat("m.bin")).error().code == store_errc::not_found);
    CHECK(!fs::exists(f.view("p/") / "m.bin"));

    // The same upload completes when nothing is injected, and create-only holds for it too.
    CHECK(f.run_on(store::write_all(*s3, "m.bin", bytes, store::write_mode::create_only)));
    CHECK(read_file(f.view("p/") / "m.bin") == bytes);
    auto again = f.run_on(store::write_all(*s3, "m.bin", std::string(bytes.size(), 'x'), store::write_mode::create_only));
    REQUIRE(!again);
    CHECK(again.error().code == store_errc::already_exists);
    CHECK(read_file(f.view("p/") / "m.bin") == bytes);
}

TEST_CASE_TEMPLATE("with a multipart threshold above the part size, the first part holds the threshold's bytes", F, s3_behind_proxy<s3rver_upstream>, s3_behind_proxy<rgw_upstream>) {
    // The buffer fills to the threshold before the upload starts, under one grant of the
    // memory budget. Cutting it into parts of part_bytes sent the second part with no
    // grant and kept the first part's whole capacity: memory past the budget.
    F f;
    constexpr std::size_t part = std::remove_reference_t<decltype(f)>::small_part;
    constexpr std::size_t threshold = 2 * part + part / 2;
    auto s3 = f.open("t/", part, threshold);
    std::string bytes(4 * part + 123, '\0');
    for (std::size_t i = 0; i < bytes.size(); ++i)
        bytes[i] = static_cast<char>('a' + i % 23);
    std::function<awaitable<result<void>>()> upload = [&]() -> awaitable<result<void>> {
        auto opened = co_await s3->open_writer("big.bin", store::write_mode::create_only);
        if (!opened)
            co_return opened.error();
        auto& writer = *opened;
        for (std::size_t at = 0; at < bytes.size(); at += 1000) {
            auto chunk = std::as_bytes(std::span(bytes).subspan(at, std::min<std::size_t>(1000, bytes.size() - at)));
            auto wrote = co_await writer->write(chunk);
            if (!wrote)
                co_return wrote;
        }
        co_return co_await writer->commit();
    };
    auto r = f.run_on(upload());
    INFO(f.log_since(0));
    REQUIRE_MESSAGE(r, (r ? "" : r.error().message));
    std::map<int, std::uint64_t> sizes; // part number -> bytes sent
    for (auto const& q : f.proxy.requests()) {
        auto at = q.target.find("partNumber=");
        if (q.method == "PUT" && at != std::string::npos)
            sizes[std::stoi(q.target.substr(at + 11))] = std::stoull(q.header("content-length"));
    }
    std::map<int, std::uint64_t> const expected{{1, threshold}, {2, part}, {3, part / 2 + 123}};
    std::string sent;
    for (auto const& [number, size] : sizes)
        sent += " " + std::to_string(number) + ":" + std::to_string(size);
    CHECK_MESSAGE(sizes == expected, "parts sent:" << sent);
    CHECK(read_file(f.view("t/") / "big.bin") == bytes);
}

TEST_CASE_TEMPLATE("a sync into S3 through SlowDown, InternalError and a stall retries and completes", F, s3_behind_proxy<s3rver_upstream>, s3_behind_proxy<rgw_upstream>) {
    F f;
    auto to = f.open("lake/");
    f.proxy.fail_matching("PUT", "", s3_error(503, "SlowDown"), 3);
    f.proxy.fail_matching("GET", "list-type=2", s3_error(500, "InternalError"), 2);
    f.proxy.fail_matching("GET", "/mirror/lake/fdl.json", stall_before_headers(1500ms));
    auto r = f.sync_to(*to);
    INFO(describe(r) << f.log_since(0));
    CHECK(r.exit_code() == 0);
    CHECK(r.published.size() == 4);
    CHECK(f.proxy.count("GET", "/mirror/lake/fdl.json") == 2); // past the deadline, asked again
    std::size_t refused = 0;
    for (auto const& q : f.proxy.requests())
        if (q.status >= 500 && q.status != 501) { // s3rver's 501 to ListMultipartUploads is final
            ++refused;
            CHECK_MESSAGE(f.proxy.count(q.method, q.target) >= 2, shown(q) << " was not tried again");
        }
    CHECK(refused == 5);
    auto seen = f.view("lake/");
    auto problems = mirror_problems(seen, f.tmp / "origin");
    CHECK_MESSAGE(problems.empty(), lines(problems));
    for (auto const& f : files_under(f.tmp / "origin"))
        CHECK_MESSAGE(fs::exists(seen / f), f);
    CHECK(ref_of(seen, "refs/heads/main") == f.sample.main.back());
}

// A ListObjectsV2 page has no ETag, so the client cannot resume one cut mid-body; but the
// page goes into memory, and asking for it again is safe. Since the client delivers the
// bytes that came before a failure, a page cut after any byte fails the pass.
TEST_CASE_TEMPLATE("a listing page cut or stalled mid-body is asked again, and the sync completes", F, s3_behind_proxy<s3rver_upstream>, s3_behind_proxy<rgw_upstream>) {
    F f;
    std::vector<std::pair<std::string, fault>> const faults{{"reset", reset_mid_body()},
                                                           {"stall", stall_mid_body(1500ms)}};
    for (auto const& [name, fault_of_page] : faults) {
        CAPTURE(name);
        std::string prefix = name + "/";
        auto to = f.open(prefix);
        f.proxy.fail_matching("GET", "list-type=2", fault_of_page);
        auto before = f.proxy.requests().size();
        auto r = f.sync_to(*to);
        INFO(describe(r) << f.log_since(before));
        CHECK(r.exit_code() == 0);
        auto problems = mirror_problems(f.view(prefix), f.tmp / "origin", false);
        CHECK_MESSAGE(problems.empty(), lines(problems));
    }
}

TEST_CASE_TEMPLATE("AccessDenied on a data file is final: its version is not published, main stays", F, s3_behind_proxy<s3rver_upstream>, s3_behind_proxy<rgw_upstream>) {
    F f;
    auto to = f.open("lake/");
    REQUIRE(f.sync_to(*to).exit_code() == 0);
    auto next = add_main_version(f.origin, f.sample);
    f.proxy.fail_matching("PUT", "ducklake-0005.parquet", s3_error(403, "AccessDenied"), 100);
    auto before = f.proxy.requests().size();
    auto r = f.sync_to(*to);
    INFO(describe(r) << f.log_since(before));
    CHECK(r.exit_code() == 3);
    CHECK(r.published.empty());
    CHECK(f.proxy.count("PUT", "ducklake-0005.parquet") == 1); // not retried
    auto seen = f.view("lake/");
    CHECK(!fs::exists(seen / "versions" / next / "version.json"));
    CHECK(!fs::exists(seen / "data/main/population/ducklake-0005.parquet"));
    CHECK(ref_of(seen, "refs/heads/main") == f.sample.main.back());
    CHECK(read_file(seen / "refs.json").find(next) == std::string::npos);
    auto problems = mirror_problems(seen, f.tmp / "origin");
    CHECK_MESSAGE(problems.empty(), lines(problems));

    f.proxy.clear_faults();
    auto rerun = f.sync_to(*to);
    CHECK_MESSAGE(rerun.exit_code() == 0, describe(rerun));
    CHECK(rerun.published == std::vector{next});
    seen = f.view("lake/");
    CHECK(ref_of(seen, "refs/heads/main") == next);
    CHECK(mirror_problems(seen, f.tmp / "origin").empty());
}

TEST_CASE_TEMPLATE("a 412 on a create-only PUT is already_exists, and nothing unverified becomes visible", F, s3_behind_proxy<s3rver_upstream>, s3_behind_proxy<rgw_upstream>) {
    F f;
    auto const last = f.sample.main.back();
    auto held = [](sync::sync_report const& r, std::string const& id) {
        return std::any_of(r.held.begin(), r.held.end(), [&](auto const& h) { return h.id == id; });
    };
    { // on fdl.json: the pass stops before writing anything else
        auto to = f.open("fdl/");
        f.proxy.fail_matching("PUT", "/mirror/fdl/fdl.json", s3_error(412, "PreconditionFailed"));
        auto before = f.proxy.requests().size();
        auto r = f.sync_to(*to);
        INFO(describe(r) << f.log_since(before));
        REQUIRE(r.fatal.has_value());
        CHECK(r.fatal->code == store_errc::already_exists);
        CHECK(r.fatal->message.find("fdl.json") != std::string::npos);
        CHECK(r.exit_code() == 3);
        CHECK(f.proxy.count("PUT", "/mirror/fdl/") == 1);
        CHECK(files_under(f.view("fdl/")).empty());
    }
    { // on a version.json: that version and its descendants are held, and no ref names them
        auto to = f.open("record/");
        std::string record = "/mirror/record/versions/" + last + "/version.json";
        f.proxy.fail_matching("PUT", record, s3_error(412, "PreconditionFailed"));
        auto before = f.proxy.requests().size();
        auto r = f.sync_to(*to);
        INFO(describe(r) << f.log_since(before));
        CHECK(r.exit_code() == 1);
        CHECK(r.published.size() == 2);
        CHECK(held(r, last));
        CHECK(held_for(r, f.sample.dev_tip, sync::sync_errc::ancestor_held));
        CHECK(f.proxy.count("PUT", record) == 1);
        auto seen = f.view("record/");
        CHECK(!fs::exists(seen / "versions" / last / "version.json"));
        CHECK(ref_of(seen, "refs/heads/main").empty());
        CHECK(ref_of(seen, "refs/heads/dev").empty());
        CHECK(ref_of(seen, "refs/tags/v1") == f.sample.main.front());
        auto problems = mirror_problems(seen, f.tmp / "origin");
        CHECK_MESSAGE(problems.empty(), lines(problems));
    }
    { // on a data file: the version needing it is held
        auto to = f.open("data/");
        std::string data = "/mirror/data/data/main/population/ducklake-0004.parquet"; // dev's only
        f.proxy.fail_matching("PUT", data, s3_error(412, "PreconditionFailed"));
        auto before = f.proxy.requests().size();
        auto r = f.sync_to(*to);
        INFO(describe(r) << f.log_since(before));
        CHECK(r.exit_code() == 1);
        CHECK(r.published.size() == 3);
        CHECK(held(r, f.sample.dev_tip));
        CHECK(f.proxy.count("PUT", data) == 1);
        auto seen = f.view("data/");
        CHECK(!fs::exists(seen / "versions" / f.sample.dev_tip / "version.json"));
        CHECK(!fs::exists(seen / "data/main/population/ducklake-0004.parquet"));
        CHECK(ref_of(seen, "refs/heads/main") == last);
        CHECK(ref_of(seen, "refs/heads/dev").empty());
        auto problems = mirror_problems(seen, f.tmp / "origin");
        CHECK_MESSAGE(problems.empty(), lines(problems));
    }
}

// On S3, a create-only PUT that landed but whose answer was lost meets its own object when
// retried: 412. The proxy forwards the PUT, resets the connection, and answers the retry
// 412 as S3 would. The pass must take the object for its own and go on, as it does for a
// data file and a version.json.
TEST_CASE_TEMPLATE("a create-only PUT whose answer is lost is retried, and the 412 taken for its own", F, s3_behind_proxy<s3rver_upstream>, s3_behind_proxy<rgw_upstream>) {
    F f;
    std::vector<std::string> const keys{"data/main/population/ducklake-0002.parquet",
                                        "versions/" + f.sample.main[1] + "/version.json", "fdl.json", "refs/tags/v1"};
    for (std::size_t i = 0; i < keys.size(); ++i) {
        std::string prefix = "lost-" + std::to_string(i) + "/";
        std::string target = "/mirror/" + prefix + keys[i];
        CAPTURE(target);
        auto to = f.open(prefix);
        f.proxy.fail_matching("PUT", target, lose_answer());
        auto before = f.proxy.requests().size();
        auto r = f.sync_to(*to);
        INFO(describe(r) << f.log_since(before));
        std::vector<unsigned> answers;
        for (auto const& q : f.proxy.requests())
            if (q.method == "PUT" && q.target == target)
                answers.push_back(q.status);
        // Lost, then the object is found there. (A data file may be written again for a
        // later version of the same pass, and be answered 412 again.)
        REQUIRE(answers.size() >= 2);
        CHECK(answers[0] == 0);
        CHECK(answers[1] == 412);
        CHECK(r.exit_code() == 0);
        auto problems = mirror_problems(f.view(prefix), f.tmp / "origin");
        CHECK_MESSAGE(problems.empty(), lines(problems));
    }
}

// Style rule 14's loop, over the wire: every request of a pass, broken two ways. A
// smaller repository than the sample keeps it quick (a pass of the sample takes a second
// here, most of it s3rver and DuckDB), with every kind of write a pass makes: data files
// (one shared by both versions), ledger, catalog, dataset.json, files.json, version.json,
// a tag, two branches, refs.json and HEAD.
TEST_CASE_TEMPLATE("a sync into S3 broken at any request leaves a consistent mirror, and a rerun completes it", F, s3_behind_proxy<s3rver_upstream>, s3_behind_proxy<rgw_upstream>) {
    F f;
    publisher small(f.tmp / "small");
    small.add_data_file("main/t/a.parquet", std::string(3000, 'a'));
    small.add_data_file("main/t/b.parquet", std::string(2000, 'b'));
    version_options first;
    first.data_files = {"main/t/a.parquet"};
    auto v1 = small.add_version(first);
    version_options second;
    second.parent = v1;
    second.data_files = {"main/t/a.parquet", "main/t/b.parquet"};
    auto v2 = small.add_version(second);
    small.set_branch("main", v2);
    small.set_branch("dev", v1);
    small.set_tag("v1", v1);
    small.set_head("main");
    small.write_refs_json();
    auto source = open_folder(f.tmp / "small", false);
    auto pass = [&](store::store& to) { return f.run_on(sync::run_sync(*source, to, {}, nullptr)); };

    std::size_t total = 0; // requests of a clean pass
    {
        auto to = f.open("clean/");
        REQUIRE(pass(*to).exit_code() == 0);
        total = f.proxy.requests().size();
    }
    std::vector<std::string> not_over; // lost answers a pass did not get over
    for (std::size_t n = 1; n <= total; ++n) {
        for (bool lost : {true, false}) {
            // lost: request n reaches s3rver and its answer is lost (a reset); else s3rver
            // answers 500 InternalError f.from request n on, through every retry.
            CAPTURE(n);
            CAPTURE(lost);
            std::string prefix = (lost ? "lost-" : "down-") + std::to_string(n) + "/";
            auto to = f.open(prefix);
            f.proxy.clear_faults();
            auto before = f.proxy.requests().size();
            if (lost)
                f.proxy.fail_request(before + n, lose_answer());
            else
                f.proxy.fail_from(before + n, s3_error(500, "InternalError"));
            auto r = pass(*to);
            auto problems = mirror_problems(f.view(prefix), f.tmp / "small");
            CHECK_MESSAGE(problems.empty(), lines(problems) << f.log_since(before));
            if (lost && r.exit_code() != 0)
                not_over.push_back(std::to_string(n) + " " + shown(f.proxy.requests().at(before + n - 1)) + ": " +
                                   describe(r));
            if (!lost)
                CHECK_MESSAGE(r.exit_code() == 3, describe(r) << f.log_since(before));
            f.proxy.clear_faults();
            auto rerun = pass(*to);
            CHECK_MESSAGE(rerun.exit_code() == 0, describe(rerun));
            auto seen = f.view(prefix);
            problems = mirror_problems(seen, f.tmp / "small", false);
            CHECK_MESSAGE(problems.empty(), lines(problems));
            for (auto const& f : files_under(f.tmp / "small"))
                CHECK_MESSAGE(fs::exists(seen / f), f);
            CHECK(ref_of(seen, "refs/heads/main") == v2);
            CHECK(ref_of(seen, "refs/heads/dev") == v1);
            CHECK(ref_of(seen, "refs/tags/v1") == v1);
        }
    }
    CHECK(total >= 20);
    CHECK_MESSAGE(not_over.empty(), lines(not_over));
}

TEST_SUITE_END();
