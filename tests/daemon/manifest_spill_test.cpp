// verify's manifest spilled to a temporary file: what goes in comes back whole, in order,
// and the reports written from a spill are the reports written from memory.

#include "daemon/cli/manifest_spill.hpp"
#include "daemon/cli/report_output.hpp"

#include <boost/json.hpp>
#include <doctest/doctest.h>

#include <csignal>
#include <cstdlib>
#include <string>
#include <vector>

#include <sys/resource.h>

using namespace mirror;
namespace json = boost::json;

namespace {

sync::audited_file data_file(std::string path, std::uint64_t bytes) {
    return {std::move(path), sync::file_role::data_file, bytes, verify::sha256_of(std::to_string(bytes)),
            sync::file_voucher::ledger};
}

std::unique_ptr<daemon::manifest_spill> path_spill(std::string separator) {
    std::string problem;
    auto spill = daemon::manifest_spill::create([](sync::audited_file const& f) { return f.path; },
                                                std::move(separator), problem);
    REQUIRE_MESSAGE(spill != nullptr, problem);
    return spill;
}

/// What `copy` writes for `id`, and how many pieces it took.
std::pair<std::string, std::size_t> copied(daemon::manifest_spill const& spill, std::string const& id) {
    std::string text, problem;
    std::size_t pieces = 0;
    REQUIRE(spill.copy(id, [&](std::string_view piece) { text += piece, ++pieces; }, problem));
    return {text, pieces};
}

} // namespace

TEST_CASE("a spill gives back each version's entries as taken, joined by its separator") {
    auto spill = path_spill("|");
    CHECK(spill->take("v1", {data_file("a", 1), data_file("b", 2), data_file("c", 3)}));
    CHECK(spill->take("v2", {data_file("d", 4)}));
    CHECK(spill->holds("v1"));
    CHECK(spill->holds("v2"));
    CHECK_FALSE(spill->holds("v3"));
    CHECK(copied(*spill, "v2").first == "d");
    CHECK(copied(*spill, "v1").first == "a|b|c");
    CHECK(copied(*spill, "v3").first.empty()); // nothing taken: nothing written
    CHECK_FALSE(spill->take("v1", {data_file("e", 5)})); // once per version
    CHECK(copied(*spill, "v1").first == "a|b|c");
    CHECK(spill->bytes() == 6);
}

TEST_CASE("a spill copies a large manifest in pieces of at most 64 KiB") {
    auto spill = path_spill("\n");
    std::vector<sync::audited_file> entries;
    std::string expected;
    for (int i = 0; i < 6000; ++i) {
        entries.push_back(data_file("data/main/t/file-" + std::to_string(i) + ".parquet", 1));
        expected += (i ? "\n" : "") + entries.back().path;
    }
    REQUIRE(expected.size() > 2 * 64 * 1024);
    CHECK(spill->take("v", entries));
    auto [text, pieces] = copied(*spill, "v");
    CHECK(text == expected);
    CHECK(pieces == (expected.size() + 64 * 1024 - 1) / (64 * 1024));
}

TEST_CASE("a spill that cannot make its temporary file names the folder and why") {
    char const* saved = std::getenv("TMPDIR");
    std::string restore = saved ? saved : "";
    ::setenv("TMPDIR", "/nonexistent-fdl-mirror-tmp", 1);
    std::string problem;
    auto spill = daemon::manifest_spill::create([](sync::audited_file const& f) { return f.path; }, "", problem);
    if (saved)
        ::setenv("TMPDIR", restore.c_str(), 1);
    else
        ::unsetenv("TMPDIR");
    CHECK(spill == nullptr);
    CHECK(problem.find("/nonexistent-fdl-mirror-tmp") != std::string::npos);
    CHECK(problem.find("No such file or directory") != std::string::npos);
}

namespace {

constexpr char const* tip = "019a0000-0000-7000-8000-000000000002";
constexpr char const* root = "019a0000-0000-7000-8000-000000000001";

/// Two versions: one with its own files and data files, one with data files only.
sync::audit_report two_versions() {
    sync::audit_report r;
    r.started_at = 1'700'000'000;
    r.refs = {{"refs/heads/main", tip}};
    r.files.push_back({"fdl.json", sync::file_role::fdl_json, 3, verify::sha256_of("abc")});
    sync::version_audit v;
    v.id = tip;
    v.files = {{std::string("versions/") + tip + "/version.json", sync::file_role::version_json, 3,
                verify::sha256_of("abc")},
               data_file("data/main/t/a.parquet", 10), data_file("data/main/t/b\x1b[2J.parquet", 20)};
    v.files.back().ok = false;
    r.versions.push_back(v);
    sync::version_audit bare;
    bare.id = root;
    bare.files = {data_file("data/main/t/c.parquet", 30)};
    r.versions.push_back(bare);
    return r;
}

/// The report with every data-file entry moved into `spill`.
sync::audit_report spilled(sync::audit_report r, daemon::manifest_spill& spill) {
    for (auto& v : r.versions) {
        std::vector<sync::audited_file> own, data;
        for (auto& f : v.files)
            (f.role == sync::file_role::data_file ? data : own).push_back(f);
        REQUIRE(spill.take(v.id, data));
        v.files = own;
    }
    return r;
}

daemon::audit_setup setup() {
    daemon::audit_setup s;
    s.repository = "/srv/mirror";
    return s;
}

std::string written(bool as_json, sync::audit_report const& r, daemon::audit_setup const& s,
                    daemon::manifest_spill const* spill) {
    std::string text, problem;
    auto out = [&](std::string_view piece) { text += piece; };
    bool done = as_json ? daemon::write_audit_json(r, s, spill, out, problem)
                        : daemon::write_audit_summary(r, s, spill, out, problem);
    REQUIRE_MESSAGE(done, problem);
    return text;
}

} // namespace

TEST_CASE("verify --json written from a spill is the document written from memory") {
    std::string problem;
    auto spill = daemon::manifest_spill::create(daemon::manifest_entry_json, ",", problem);
    REQUIRE(spill != nullptr);
    auto whole = two_versions();
    auto from_spill = written(true, spilled(whole, *spill), setup(), spill.get());
    auto from_memory = daemon::audit_json(whole, setup());
    // The same document but for the process's peak RSS, read as each is written (it may
    // grow in between: a flake seen once, 2026-12-05).
    auto without_rss = [](std::string const& text) {
        auto doc = json::parse(text).as_object();
        doc.erase("peak_rss_bytes");
        return json::serialize(doc);
    };
    CHECK(without_rss(from_spill) == without_rss(from_memory));
    auto doc = json::parse(from_spill).as_object(); // valid JSON, a version without own files included
    auto const& bare = doc.at("versions").as_array().at(1).as_object();
    REQUIRE(bare.at("files").as_array().size() == 1);
    CHECK(bare.at("files").as_array().at(0).at("path").as_string() == "data/main/t/c.parquet");
    CHECK(doc.at("versions").as_array().at(0).at("files").as_array().size() == 3);
}

TEST_CASE("verify --full-digests written from a spill is the summary written from memory, terminal-safe") {
    std::string problem;
    auto spill = daemon::manifest_spill::create(daemon::manifest_entry_line, "", problem);
    REQUIRE(spill != nullptr);
    auto s = setup();
    s.full_digests = true;
    auto whole = two_versions();
    auto from_spill = written(false, spilled(whole, *spill), s, spill.get());
    CHECK(from_spill == daemon::audit_summary(whole, s));
    CHECK(from_spill.find("    data/main/t/c.parquet: 30 bytes") != std::string::npos);
    CHECK(from_spill.find('\x1b') == std::string::npos); // the escape in a path is shown, not sent
    CHECK(from_spill.find("b\\x1b[2J.parquet: FAILED") != std::string::npos);
}

namespace {

/// Caps the size of files this process writes (RLIMIT_FSIZE) while it lives: a write past
/// it fails with EFBIG, as on a full disk. SIGXFSZ, which would end the process, is ignored.
class file_size_cap {
public:
    explicit file_size_cap(rlim_t bytes) {
        ::getrlimit(RLIMIT_FSIZE, &saved_);
        previous_ = std::signal(SIGXFSZ, SIG_IGN);
        rlimit capped = saved_;
        capped.rlim_cur = bytes;
        ::setrlimit(RLIMIT_FSIZE, &capped);
    }
    ~file_size_cap() {
        ::setrlimit(RLIMIT_FSIZE, &saved_);
        std::signal(SIGXFSZ, previous_);
    }

private:
    rlimit saved_{};
    void (*previous_)(int) = nullptr;
};

} // namespace

TEST_CASE("a version whose entries cannot be written is not taken, and the next is written whole") {
    auto spill = path_spill("|");
    REQUIRE(spill->take("v1", {data_file("a", 1), data_file("b", 2)}));
    std::vector<sync::audited_file> too_many;
    for (int i = 0; i < 200; ++i)
        too_many.push_back(data_file("data/main/t/file-" + std::to_string(i) + ".parquet", 1));
    {
        file_size_cap cap(1024); // room for v1 and part of v2
        CHECK_FALSE(spill->take("v2", too_many)); // the version keeps its entries in the report
    }
    CHECK_FALSE(spill->holds("v2"));
    CHECK(spill->bytes() == 3);
    REQUIRE(spill->take("v3", {data_file("c", 3)})); // written over what v2 left
    CHECK(copied(*spill, "v1").first == "a|b");
    CHECK(copied(*spill, "v3").first == "c");
}
