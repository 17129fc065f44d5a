// What a hostile or careless origin publishes outside its versions: refs and HEAD. Each
// is refused on its own, reported, and leaves the rest of the repository mirrored.

#include "core/sync/sync_pass.hpp"

#include "core/store/open_store.hpp"
#include "tests/component/helpers.hpp"
#include "tests/support/nginx.hpp"
#include "tests/support/run.hpp"
#include "tests/support/temp_dir.hpp"

#include <boost/json.hpp>
#include <doctest/doctest.h>

using namespace mirror;
using namespace mirror::test;
using sync::sync_errc;
namespace fs = std::filesystem;

namespace {

struct fixture {
    temp_dir tmp;
    publisher origin{tmp / "origin"};
    sample_repo sample = publish_sample(origin);
    fs::path mirror = tmp / "mirror";

    sync::sync_report pass(sync::sync_options options = {}) { return sync_folders(tmp / "origin", mirror, options); }

    /// Adds refs to the origin's refs.json only (an HTTP origin's list of refs), each
    /// naming the tip of main.
    void add_to_refs_json(std::vector<std::string> const& names) {
        auto document = boost::json::parse(read_file(tmp / "origin" / "refs.json")).as_object();
        auto& refs = document["refs"].as_object();
        for (auto const& name : names)
            refs[name] = sample.main.back();
        write_file(tmp / "origin" / "refs.json", boost::json::serialize(document));
    }

    /// One pass from the origin served by nginx over plain HTTP on loopback, into the folder mirror.
    sync::sync_report pass_over_http(nginx_server const& nginx, sync::sync_options options = {}) {
        event_loop run_on;
        auto from = store::open_store(nginx.url(), store::store_role::origin, nullptr, {.allow_plain_http = true});
        REQUIRE_MESSAGE(from.has_value(), (from ? "" : from.error().message));
        auto to = open_folder(mirror, true);
        return run_on(sync::run_sync(**from, *to, std::move(options), nullptr));
    }
};

} // namespace

TEST_CASE_FIXTURE(fixture, "a HEAD that names a branch the origin lacks is a problem, not a quiet success") {
    origin.set_head("ghost");
    origin.write_refs_json();
    auto r = pass();
    INFO(describe(r));
    CHECK(r.exit_code() == 1);
    CHECK(violated(r, sync_errc::refused_ref, "HEAD: names refs/heads/ghost, which does not exist at the origin"));
    // Everything else is mirrored; the mirror writes no HEAD that would dangle.
    CHECK(ref_of(mirror, "refs/heads/main") == sample.main.back());
    CHECK(ref_of(mirror, "refs/heads/dev") == sample.dev_tip);
    CHECK(!fs::exists(mirror / "HEAD"));
    CHECK(reader_visible_problems(mirror).empty());

    // Once the origin mends it, the next pass writes HEAD and succeeds.
    origin.set_head("main");
    origin.write_refs_json();
    auto mended = pass();
    INFO(describe(mended));
    CHECK(mended.exit_code() == 0);
    CHECK(read_file(mirror / "HEAD") == read_file(tmp / "origin" / "HEAD"));
}

TEST_CASE_FIXTURE(fixture, "a ref the mirror's file system cannot hold is refused alone, the others are written") {
    // An HTTP origin lists its refs in refs.json, so a name need not fit any file system there.
    std::string long_name = "refs/heads/" + std::string(300, 'x');
    add_to_refs_json({long_name});
    nginx_server nginx{nginx_options{tmp / "origin"}};
    sync::sync_options options;
    options.refs.max_name_bytes = 4096; // let the name reach the mirror's file system
    auto r = pass_over_http(nginx, options);
    INFO(describe(r));
    CHECK(r.exit_code() == 1);
    CHECK(!r.io_failure);
    CHECK(violated(r, sync_errc::refused_ref, "the mirror cannot hold this ref: "));
    CHECK(violated(r, sync_errc::refused_ref, "name too long"));
    CHECK(ref_of(mirror, "refs/heads/main") == sample.main.back());
    CHECK(ref_of(mirror, "refs/heads/dev") == sample.dev_tip);
    CHECK(ref_of(mirror, "refs/tags/v1") == sample.main.front());
    CHECK(fs::exists(mirror / "HEAD"));
    CHECK(read_file(mirror / "refs.json").find("xxxxxxxx") == std::string::npos);
    CHECK(reader_visible_problems(mirror).empty());
}

TEST_CASE_FIXTURE(fixture, "ref names past the length limit are refused, by default and as configured") {
    std::string long_name = "refs/heads/" + std::string(250, 'y'); // 261 bytes: past the default 255
    add_to_refs_json({long_name, "refs/heads/short"});
    nginx_server nginx{nginx_options{tmp / "origin"}};
    auto r = pass_over_http(nginx);
    INFO(describe(r));
    CHECK(r.exit_code() == 1);
    CHECK(violated(r, sync_errc::refused_ref, "a name of 261 bytes, more than the 255 this mirror accepts"));
    CHECK(ref_of(mirror, "refs/heads/short") == sample.main.back());
    CHECK(ref_of(mirror, "refs/heads/main") == sample.main.back());

    sync::sync_options options;
    options.refs.max_name_bytes = 15;
    auto tight = pass_over_http(nginx, options);
    INFO(describe(tight));
    CHECK(violated(tight, sync_errc::refused_ref, "refs/heads/short: a name of 16 bytes, more than the 15"));
    CHECK(!violated(tight, sync_errc::refused_ref, "refs/heads/main: a name"));
}

TEST_CASE_FIXTURE(fixture, "refs past the count limit are refused: the first ones by name are mirrored") {
    std::vector<std::string> many;
    for (int i = 0; i < 50; ++i)
        many.push_back("refs/tags/t" + std::to_string(1000 + i));
    add_to_refs_json(many);
    nginx_server nginx{nginx_options{tmp / "origin"}};
    sync::sync_options options;
    options.refs.max_refs = 10;
    auto r = pass_over_http(nginx, options);
    INFO(describe(r));
    CHECK(r.exit_code() == 1);
    // 53 refs: dev, main, v1 and the 50 tags; by name, the heads and seven tags come first.
    CHECK(violated(r, sync_errc::refused_ref, "origin: 53 refs, more than the 10 this mirror follows: the first 10 "
                                              "by name are taken, 43 are not"));
    CHECK(ref_of(mirror, "refs/heads/main") == sample.main.back());
    CHECK(ref_of(mirror, "refs/tags/t1007") == sample.main.back());
    CHECK(!fs::exists(mirror / "refs/tags/t1008"));
    CHECK(!fs::exists(mirror / "refs/tags/v1"));
}

TEST_CASE_FIXTURE(fixture, "a bad entry in refs.json is refused alone, and the other refs are mirrored") {
    add_to_refs_json({"refs/heads/a..b", "refs/heads/fine"});
    auto document = boost::json::parse(read_file(tmp / "origin" / "refs.json")).as_object();
    document["refs"].as_object()["refs/tags/bad-id"] = "not-a-version";
    write_file(tmp / "origin" / "refs.json", boost::json::serialize(document));
    nginx_server nginx{nginx_options{tmp / "origin"}};
    auto r = pass_over_http(nginx);
    INFO(describe(r));
    CHECK(r.exit_code() == 1);
    CHECK(!r.fatal);
    CHECK(violated(r, sync_errc::refused_ref, "refs/heads/a..b"));
    CHECK(violated(r, sync_errc::refused_ref, "'refs/tags/bad-id': not a lower-case UUIDv7 version id"));
    CHECK(ref_of(mirror, "refs/heads/fine") == sample.main.back());
    CHECK(ref_of(mirror, "refs/heads/main") == sample.main.back());
}
