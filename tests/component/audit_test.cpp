// fdl-mirror verify: the audit of a repository, origin or mirror.

#include "core/sync/audit.hpp"

#include "core/catalog/catalog_reader.hpp"
#include "tests/component/helpers.hpp"
#include "tests/support/in_flight_store.hpp"
#include "tests/support/run.hpp"
#include "tests/support/temp_dir.hpp"
#include "verify/allowed_signers.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <map>
#include <iterator>
#include <set>

using namespace mirror;
using namespace mirror::test;
namespace fs = std::filesystem;

namespace {

sync::version_audit const* find(sync::audit_report const& r, std::string const& id) {
    for (auto const& v : r.versions)
        if (v.id == id)
            return &v;
    return nullptr;
}

bool has_problem(sync::version_audit const& v, std::string const& text) {
    return std::any_of(v.problems.begin(), v.problems.end(),
                       [&](auto const& p) { return p.message.find(text) != std::string::npos; });
}

} // namespace

namespace {

/// The sample repository, published into a folder and mirrored into another.
struct sample_mirror {
    temp_dir tmp;
    fs::path const mirror = tmp / "mirror";
    sample_mirror() {
        publisher origin(tmp / "origin");
        publish_sample(origin);
        REQUIRE(sync_folders(tmp / "origin", tmp / "mirror").exit_code() == 0);
    }
};

} // namespace

TEST_CASE("an audit visits every version reachable from the refs, and says which refs reach it") {
    temp_dir tmp;
    publisher origin(tmp / "origin");
    auto sample = publish_sample(origin);
    auto r = audit_folder(tmp / "origin");
    CHECK(r.exit_code() == 0);
    CHECK(r.versions.size() == 4);
    auto const* root = find(r, sample.main.front());
    REQUIRE(root != nullptr);
    std::set<std::string> refs(root->reached_from.begin(), root->reached_from.end());
    CHECK(refs == std::set<std::string>{"refs/heads/dev", "refs/heads/main", "refs/tags/v1"});
    auto const* second = find(r, sample.main[1]);
    REQUIRE(second != nullptr);
    CHECK(second->data_files == 3);
    CHECK(second->tables == 2);
    CHECK(second->data_bytes == 3000 + 5000 + 700);
}

TEST_CASE("an audit names each damage precisely") {
    temp_dir tmp;
    publisher origin(tmp / "origin");
    auto sample = publish_sample(origin);
    auto dir = [&](std::string const& id) { return origin.version_dir(id); };
    fs::remove(origin.data_path("main/population/ducklake-0004.parquet"));       // dev's data file
    write_file(dir(sample.main[2]) / "ducklake.duckdb", "altered catalog");       // size differs
    auto record = read_file(dir(sample.main[1]) / "version.json");
    write_file(dir(sample.main[1]) / "version.json", record.substr(0, 40));      // truncated
    auto r = audit_folder(tmp / "origin");
    CHECK(r.exit_code() == 1);
    REQUIRE(find(r, sample.dev_tip));
    CHECK(has_problem(*find(r, sample.dev_tip), "ducklake-0004.parquet: missing"));
    CHECK(has_problem(*find(r, sample.main[2]), "ducklake.duckdb: size is 15 bytes"));
    CHECK(has_problem(*find(r, sample.main[1]), "version.json: not valid JSON"));
    // Past the broken record, main's history is lost; the tag v1 still reaches the root.
    REQUIRE(find(r, sample.main.front()));
    CHECK(find(r, sample.main.front())->problems.empty());
    CHECK(find(r, sample.main.front())->reached_from == std::vector<std::string>{"refs/tags/v1"});
}

TEST_CASE("an audit checks HEAD and refs.json against the refs") {
    temp_dir tmp;
    publisher origin(tmp / "origin");
    auto sample = publish_sample(origin);
    write_file(tmp / "origin" / "HEAD", "ref: refs/heads/gone\n");
    write_file(tmp / "origin" / "refs.json", "{\"refs\":{\"refs/heads/main\":\"" + sample.dev_tip + "\"}}");
    auto r = audit_folder(tmp / "origin");
    CHECK(r.exit_code() == 1);
    auto mentions = [&](std::string const& text) {
        return std::any_of(r.problems.begin(), r.problems.end(),
                           [&](auto const& p) { return p.message.find(text) != std::string::npos; });
    };
    CHECK(mentions("HEAD: names refs/heads/gone"));
    CHECK(mentions("refs.json says refs/heads/main is " + sample.dev_tip));
    CHECK(mentions("refs.json lacks refs/tags/v1"));
}

TEST_CASE("an audit of first parents that form a cycle stops and says so") {
    temp_dir tmp;
    publisher origin(tmp / "origin");
    origin.add_data_file("main/t/a.parquet", "a");
    version_options first;
    first.data_files = {"main/t/a.parquet"};
    auto a = origin.add_version(first);
    version_options second = first;
    second.parent = a;
    auto b = origin.add_version(second);
    // a's record now names b as its parent: a -> b -> a.
    auto record = read_file(origin.version_dir(a) / "version.json");
    auto pos = record.find("\"parents\":[]");
    REQUIRE(pos != std::string::npos);
    record.replace(pos, 12, "\"parents\":[\"" + b + "\"]");
    write_file(origin.version_dir(a) / "version.json", record);
    origin.set_branch("main", b);
    origin.set_tag("t", a);
    origin.set_head("main");
    origin.write_refs_json();
    auto r = audit_folder(tmp / "origin"); // must return: the test would hang otherwise
    CHECK(r.exit_code() == 1);
    CHECK(r.versions.size() == 2);
    CHECK(std::any_of(r.problems.begin(), r.problems.end(),
                      [](auto const& p) { return p.message.find("parents form a cycle") != std::string::npos; }));
}

// The evidence manifest (issue 17): every file examined, with the size and digest the
// audit's own checks saw, and what vouches for them.
namespace {

sync::audited_file const* entry_of(std::vector<sync::audited_file> const& files, std::string const& path) {
    auto it = std::find_if(files.begin(), files.end(), [&](auto const& f) { return f.path == path; });
    return it == files.end() ? nullptr : &*it;
}

/// Each entry's size is the file's on disk, and its digest (when given) the file's.
void check_against_disk(fs::path const& root, std::vector<sync::audited_file> const& files) {
    for (auto const& f : files) {
        INFO(f.path);
        CHECK(f.ok);
        REQUIRE(f.bytes);
        CHECK(*f.bytes == fs::file_size(root / f.path));
        if (f.sha256)
            CHECK(verify::to_hex(*f.sha256) == verify::to_hex(verify::sha256_of(read_file(root / f.path))));
    }
}

} // namespace

TEST_CASE("an audit's manifest lists each file examined with the size and digest its checks saw") {
    temp_dir tmp;
    publisher origin(tmp / "origin");
    auto sample = publish_sample(origin);
    auto before = std::time(nullptr);
    auto r = audit_folder(tmp / "origin");
    REQUIRE(r.exit_code() == 0);
    CHECK(r.started_at >= before);
    CHECK(r.started_at <= std::time(nullptr));
    CHECK(r.head == std::optional<std::string>("refs/heads/main"));
    CHECK(r.refs.at("refs/heads/main") == sample.main.back());
    CHECK(r.refs.at("refs/heads/dev") == sample.dev_tip);
    CHECK(r.refs.at("refs/tags/v1") == sample.main.front());
    REQUIRE(r.files.size() == 3); // fdl.json, HEAD, refs.json: read whole, nothing pins them
    for (auto const& f : r.files) {
        CHECK(f.vouched_by == sync::file_voucher::computed);
        CHECK(f.sha256.has_value());
    }
    check_against_disk(tmp / "origin", r.files);

    for (auto const& v : r.versions) {
        std::string folder = "versions/" + v.id + "/";
        check_against_disk(tmp / "origin", v.files);
        auto const* record = entry_of(v.files, folder + "version.json");
        REQUIRE(record != nullptr);
        CHECK(record == &v.files.front());
        CHECK(record->vouched_by == sync::file_voucher::computed); // unsigned
        for (auto const* name : {"dataset.json", "files.json", "ducklake.duckdb"}) {
            auto const* pinned = entry_of(v.files, folder + name);
            REQUIRE(pinned != nullptr);
            CHECK(pinned->vouched_by == sync::file_voucher::version_json);
            CHECK(pinned->sha256.has_value());
        }
        // At an origin no ledger pins data files: their size is checked, their bytes are not read.
        auto data = std::count_if(v.files.begin(), v.files.end(), [](auto const& f) {
            return f.role == sync::file_role::data_file && !f.sha256 &&
                   (f.vouched_by == sync::file_voucher::catalog || f.vouched_by == sync::file_voucher::files_json);
        });
        CHECK(static_cast<std::uint64_t>(data) == v.data_files);
    }
}

TEST_CASE("in a mirror's manifest each data file carries the digest the ledger pins and the audit hashed") {
    sample_mirror sample;
    auto r = audit_folder(sample.mirror);
    REQUIRE(r.exit_code() == 0);
    std::size_t data_entries = 0;
    for (auto const& v : r.versions) {
        check_against_disk(sample.mirror, v.files);
        for (auto const& f : v.files)
            if (f.role == sync::file_role::data_file) {
                ++data_entries;
                CHECK(f.vouched_by == sync::file_voucher::ledger);
                CHECK(f.sha256.has_value()); // a shared file hashed once still carries its digest
            }
    }
    CHECK(data_entries == 3 + 2 + 2 + 1); // every version lists every data file it needs
}

TEST_CASE("a manifest entry of a damaged file says so, with what the audit found") {
    temp_dir tmp;
    publisher origin(tmp / "origin");
    auto sample = publish_sample(origin);
    REQUIRE(sync_folders(tmp / "origin", tmp / "mirror").exit_code() == 0);
    fs::path mirror = tmp / "mirror";
    std::string towns = "data/main/towns/ducklake-0003.parquet";
    auto bytes = read_file(mirror / towns);
    bytes[0] ^= 1; // same size, another digest
    fs::permissions(mirror / towns, fs::perms::owner_write, fs::perm_options::add);
    write_file(mirror / towns, bytes);
    fs::remove(mirror / "data/main/population/ducklake-0004.parquet");
    auto r = audit_folder(mirror);
    CHECK(r.exit_code() == 1);
    auto const* tip = find(r, sample.dev_tip);
    REQUIRE(tip != nullptr);
    auto const* missing = entry_of(tip->files, "data/main/population/ducklake-0004.parquet");
    REQUIRE(missing != nullptr);
    CHECK_FALSE(missing->ok);
    CHECK_FALSE(missing->bytes);
    CHECK_FALSE(missing->sha256);
    for (auto const* v : {find(r, sample.main[1]), find(r, sample.main[2])}) {
        REQUIRE(v != nullptr);
        auto const* changed = entry_of(v->files, towns);
        REQUIRE(changed != nullptr);
        CHECK_FALSE(changed->ok);
        CHECK(changed->bytes == bytes.size());
        CHECK_FALSE(changed->sha256); // a mismatch pins nothing
        CHECK(changed->vouched_by == sync::file_voucher::ledger);
    }
}

TEST_CASE("a verified signature vouches for version.json, and the signature's own digest is in the manifest") {
    temp_dir tmp;
    publisher origin(tmp / "origin");
    auto sample = publish_sample(origin);
    auto key = make_ssh_key(tmp / "keys", "alice");
    origin.sign(sample.main.front(), key);
    sync::audit_options options;
    options.trust.policy = verify::signature_policy::if_present;
    auto signers = verify::parse_allowed_signers(allowed_line("alice@example.org", key), "allowed_signers");
    REQUIRE(signers.has_value());
    options.trust.signers = std::move(*signers);
    auto repo = open_folder(tmp / "origin", false);
    auto r = run(sync::run_audit(*repo, nullptr, nullptr, options));
    REQUIRE(r.exit_code() == 0);
    auto const* root = find(r, sample.main.front());
    REQUIRE(root != nullptr);
    REQUIRE(root->signer.has_value());
    std::string folder = "versions/" + root->id + "/";
    CHECK(entry_of(root->files, folder + "version.json")->vouched_by == sync::file_voucher::signature);
    auto const* sig = entry_of(root->files, folder + "version.json.sig");
    REQUIRE(sig != nullptr);
    CHECK(sig->role == sync::file_role::signature);
    CHECK(sig->vouched_by == sync::file_voucher::computed);
    check_against_disk(tmp / "origin", root->files);
    auto const* unsigned_tip = find(r, sample.dev_tip);
    REQUIRE(unsigned_tip != nullptr);
    CHECK(entry_of(unsigned_tip->files, "versions/" + sample.dev_tip + "/version.json.sig") == nullptr);
    CHECK(unsigned_tip->files.front().vouched_by == sync::file_voucher::computed);
}

TEST_CASE("a manifest lists an expired version's expired.json, and catalogs in other formats as found") {
    temp_dir tmp;
    publisher origin(tmp / "origin");
    origin.add_data_file("main/t/a.parquet", std::string(100, 'a'));
    version_options first;
    first.data_files = {"main/t/a.parquet"};
    auto old = origin.add_version(first);
    version_options second = first;
    second.parent = old;
    second.catalog_formats = {"1.1"};
    auto tip = origin.add_version(second);
    origin.expire(old, false);
    origin.set_branch("main", tip);
    origin.set_head("main");
    origin.write_refs_json();
    auto r = audit_folder(tmp / "origin");
    REQUIRE(r.exit_code() == 0);
    auto const* expired = find(r, old);
    REQUIRE(expired != nullptr);
    std::string folder = "versions/" + old + "/";
    auto const* notice = entry_of(expired->files, folder + "expired.json");
    REQUIRE(notice != nullptr);
    CHECK(notice->role == sync::file_role::expired_json);
    CHECK(notice->vouched_by == sync::file_voucher::computed);
    CHECK(entry_of(expired->files, folder + "ducklake.duckdb") == nullptr); // deleted, and not looked for
    check_against_disk(tmp / "origin", expired->files);
    auto const* live = find(r, tip);
    REQUIRE(live != nullptr);
    check_against_disk(tmp / "origin", live->files);
    auto const* other = entry_of(live->files, "versions/" + tip + "/catalogs/1.1.duckdb");
    if (catalog::reader_available()) {
        REQUIRE(other != nullptr); // read and compared with the catalog, not pinned: no digest kept
        CHECK(other->role == sync::file_role::other_catalog);
        CHECK(other->vouched_by == sync::file_voucher::observed);
        CHECK_FALSE(other->sha256);
    } else {
        CHECK(other == nullptr); // not read without a catalog reader
    }
}

// Overlapped checks (issue 16): a version's data-file checks run up to `concurrency` at
// once, and the report is the one a check at a time makes.
namespace {

/// Everything an audit reports but its timing, one line each, to compare two audits.
std::string rendered(sync::audit_report const& r) {
    std::string out = "exit " + std::to_string(r.exit_code()) + (r.io_failure ? " io_failure" : "") + "\n";
    auto file_line = [&](sync::audited_file const& f) {
        out += "  file " + f.path + " " + std::string(sync::role_name(f.role)) + " " +
               (f.bytes ? std::to_string(*f.bytes) : "-") + " " + (f.sha256 ? verify::to_hex(*f.sha256) : "-") + " " +
               std::string(sync::voucher_name(f.vouched_by)) + (f.ok ? " ok" : " FAILED") + "\n";
    };
    auto problem_line = [&](error const& e) { out += "  problem " + sync::kind_of(e.code) + ": " + e.message + "\n"; };
    for (auto const& p : r.problems)
        problem_line(p);
    for (auto const& w : r.warnings)
        out += "warning " + w + "\n";
    for (auto const& f : r.files)
        file_line(f);
    for (auto const& v : r.versions) {
        out += "version " + v.id + " from";
        for (auto const& ref : v.reached_from)
            out += " " + ref;
        out += ": " + std::to_string(v.data_files) + " files, " + std::to_string(v.data_bytes) + " bytes, " +
               std::to_string(v.data_files_proven) + " proven, " + std::to_string(v.tables) + " tables, source " +
               v.data_source + ", signature " + v.signature + "\n";
        for (auto const& p : v.problems)
            problem_line(p);
        for (auto const& f : v.files)
            file_line(f);
    }
    return out;
}

/// A mirror of many data files: publish_many_files, mirrored.
struct many_files_mirror {
    temp_dir tmp;
    std::vector<std::string> paths;
    many_files_mirror() {
        publisher origin(tmp / "origin");
        paths = publish_many_files(origin, 24);
        REQUIRE(sync_folders(tmp / "origin", tmp / "mirror").exit_code() == 0);
    }
    fs::path data(std::size_t i) const { return tmp / "mirror" / "data" / paths.at(i); }
};

sync::audit_report audit_with(store::store& repo, std::size_t concurrency) {
    sync::audit_options options;
    options.concurrency = concurrency;
    return run(sync::run_audit(repo, nullptr, nullptr, options));
}

} // namespace

TEST_CASE("an audit overlaps its data-file checks, at most `concurrency` in flight, and reports as one a check at a "
          "time does") {
    many_files_mirror m;
    flip_byte(m.data(3));  // shared by both versions: hashed once, failing both
    flip_byte(m.data(17)); // the tip's own
    fs::remove(m.data(20));
    auto mirror = open_folder(m.tmp / "mirror", false);

    in_flight_store one_at_a_time(*mirror);
    auto serial = audit_with(one_at_a_time, 1);
    CHECK(one_at_a_time.most_in_flight == 1);
    in_flight_store overlapped(*mirror);
    auto parallel = audit_with(overlapped, 8);
    CHECK(overlapped.most_in_flight > 1);
    CHECK(overlapped.most_in_flight <= 8);
    CHECK(overlapped.requests == one_at_a_time.requests); // nothing read twice, nothing skipped

    CHECK(rendered(parallel) == rendered(serial));
    CHECK(serial.exit_code() == 1);
    REQUIRE(serial.versions.size() == 2);
    auto const& tip = serial.versions.front();
    CHECK(tip.data_files == 24);
    CHECK(tip.data_files_proven == 21);
    REQUIRE(tip.problems.size() == 3);
    CHECK(tip.problems[0].message.find(m.paths[3]) != std::string::npos); // in the catalog's order
    CHECK(tip.problems[1].message.find(m.paths[17]) != std::string::npos);
    CHECK(tip.problems[2].message.find(m.paths[20] + ": missing") != std::string::npos);
    CHECK(has_problem(serial.versions.back(), m.paths[3])); // the root's verdict, reused
    CHECK(serial.versions.back().data_files_proven == 11);
}

TEST_CASE("where the repository cannot list, the audit overlaps its stats of data files the same way") {
    temp_dir tmp;
    publisher origin(tmp / "origin");
    auto paths = publish_many_files(origin, 24);
    fs::resize_file(origin.data_path(paths[5]), origin.data_size(paths[5]) - 1);
    fs::remove(origin.data_path(paths[19]));
    auto repo = open_folder(tmp / "origin", false);

    in_flight_store one_at_a_time(*repo);
    one_at_a_time.hide_listing = true; // as an HTTP origin: one stat a data file
    auto serial = audit_with(one_at_a_time, 1);
    CHECK(one_at_a_time.most_in_flight == 1);
    in_flight_store overlapped(*repo);
    overlapped.hide_listing = true;
    auto parallel = audit_with(overlapped, 8);
    CHECK(overlapped.most_in_flight > 1);
    CHECK(overlapped.most_in_flight <= 8);

    CHECK(rendered(parallel) == rendered(serial));
    CHECK(serial.exit_code() == 1);
    REQUIRE_FALSE(serial.versions.empty());
    auto const& tip = serial.versions.front();
    REQUIRE(tip.problems.size() == 2);
    CHECK(tip.problems[0].message.find(paths[5] + ": size is") != std::string::npos);
    CHECK(tip.problems[1].message.find(paths[19] + ": missing") != std::string::npos);
}

TEST_CASE("a version's own reads overlap too: version.json, expired.json, the signature, dataset.json, files.json") {
    // One data file per version: whatever overlaps is the version's own files, read at
    // once rather than one round trip each against a distant store.
    temp_dir tmp;
    publisher origin(tmp / "origin");
    std::vector<std::string> ids;
    std::optional<std::string> parent;
    for (int v = 0; v < 4; ++v) {
        version_options options;
        options.parent = parent;
        options.data_files = {"main/t/ducklake-" + std::to_string(v) + ".parquet"};
        origin.add_data_file(options.data_files.front(), "bytes of " + std::to_string(v));
        parent = origin.add_version(options);
        ids.push_back(*parent);
    }
    origin.set_branch("main", *parent);
    origin.set_head("main");
    origin.write_refs_json();
    origin.expire(ids[0], false);
    origin.expire(ids[1], true);
    // Problems, so that their order in the report is compared too.
    write_file(tmp / "origin" / "versions" / ids[2] / "ducklake.duckdb.wal", "a log");
    write_file(tmp / "origin" / "versions" / ids[3] / "dataset.json", "{\"changed\": true}");
    auto repo = open_folder(tmp / "origin", false);

    in_flight_store one_at_a_time(*repo);
    auto serial = audit_with(one_at_a_time, 1);
    CHECK(one_at_a_time.most_in_flight == 1);
    in_flight_store overlapped(*repo);
    auto parallel = audit_with(overlapped, 8);
    CHECK(overlapped.most_in_flight >= 3);
    CHECK(overlapped.most_in_flight <= 8);
    CHECK(overlapped.requests == one_at_a_time.requests);

    CHECK(rendered(parallel) == rendered(serial));
    CHECK(serial.exit_code() == 1);
    REQUIRE(serial.versions.size() == 4);
    CHECK(has_problem(serial.versions[0], "dataset.json"));
    CHECK(has_problem(serial.versions[1], "ducklake.duckdb.wal"));
    CHECK(serial.versions[2].withdrawn);
    CHECK(serial.versions[3].expired);
    CHECK_FALSE(serial.versions[3].withdrawn);
}

namespace {

/// Records what an audit hands to its manifest sink, and takes it or not.
class recording_sink final : public sync::manifest_sink {
public:
    explicit recording_sink(bool accept) : accept_(accept) {}
    bool take(std::string const& version_id, std::vector<sync::audited_file> const& entries) override {
        calls.emplace_back(version_id, entries);
        return accept_;
    }
    std::vector<std::pair<std::string, std::vector<sync::audited_file>>> calls;

private:
    bool accept_;
};

sync::audit_report audit_into(fs::path const& root, sync::manifest_sink& sink) {
    auto repo = open_folder(root, false);
    sync::audit_options options;
    options.data_manifest = &sink;
    return run(sync::run_audit(*repo, nullptr, nullptr, options));
}

std::vector<sync::audited_file> data_entries(std::vector<sync::audited_file> const& files) {
    std::vector<sync::audited_file> out;
    std::copy_if(files.begin(), files.end(), std::back_inserter(out),
                 [](auto const& f) { return f.role == sync::file_role::data_file; });
    return out;
}

bool same_entries(std::vector<sync::audited_file> const& a, std::vector<sync::audited_file> const& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](auto const& x, auto const& y) {
        return x.path == y.path && x.role == y.role && x.bytes == y.bytes && x.sha256 == y.sha256 &&
               x.vouched_by == y.vouched_by && x.ok == y.ok;
    });
}

} // namespace

TEST_CASE("a manifest sink takes each version's data-file entries once, in order, and the report keeps the rest") {
    sample_mirror sample;
    auto whole = audit_folder(sample.mirror);
    REQUIRE(whole.exit_code() == 0);

    recording_sink sink(true);
    auto r = audit_into(sample.mirror, sink);
    CHECK(r.exit_code() == 0);
    REQUIRE(r.versions.size() == whole.versions.size());
    CHECK(sink.calls.size() == whole.versions.size()); // every version of the sample needs data files
    std::set<std::string> handed;
    for (auto const& [id, entries] : sink.calls)
        CHECK(handed.insert(id).second); // once per version
    for (std::size_t i = 0; i < r.versions.size(); ++i) {
        auto const& v = r.versions[i];
        auto const& all = whole.versions[i];
        CHECK(v.id == all.id);
        CHECK(data_entries(v.files).empty()); // taken: not held by the report
        CHECK(v.files.size() == all.files.size() - data_entries(all.files).size());
        auto call = std::find_if(sink.calls.begin(), sink.calls.end(), [&](auto const& c) { return c.first == v.id; });
        REQUIRE(call != sink.calls.end());
        CHECK(same_entries(call->second, data_entries(all.files))); // the same entries, in the same order
        CHECK(v.data_files == all.data_files); // the counts do not depend on where the entries went
        CHECK(v.data_files_proven == all.data_files_proven);
    }
}

TEST_CASE("entries a manifest sink refuses stay in the report") {
    temp_dir tmp;
    publisher origin(tmp / "origin");
    publish_sample(origin);
    auto whole = audit_folder(tmp / "origin");
    recording_sink sink(false);
    auto r = audit_into(tmp / "origin", sink);
    CHECK_FALSE(sink.calls.empty());
    REQUIRE(r.versions.size() == whole.versions.size());
    for (std::size_t i = 0; i < r.versions.size(); ++i)
        CHECK(same_entries(r.versions[i].files, whole.versions[i].files));
}

TEST_CASE("a damaged data file shared by versions fails each of them, hashed once") {
    sample_mirror sample;
    auto whole = audit_folder(sample.mirror);
    std::map<std::string, int> needed_by;
    for (auto const& v : whole.versions)
        for (auto const& f : data_entries(v.files))
            needed_by[f.path] += 1;
    auto shared = std::find_if(needed_by.begin(), needed_by.end(), [](auto const& p) { return p.second >= 2; });
    REQUIRE(shared != needed_by.end());
    fs::path file = sample.mirror / shared->first;
    auto size = fs::file_size(file);
    std::ofstream(file, std::ios::binary | std::ios::trunc) << std::string(size, 'x'); // same size, other bytes

    auto r = audit_folder(sample.mirror);
    CHECK(r.exit_code() == 1);
    int failed = 0, repeated = 0;
    for (auto const& v : r.versions)
        for (auto const& p : v.problems)
            if (p.message.find(shared->first) != std::string::npos) {
                ++failed;
                repeated += p.message.ends_with(" (as above)") ? 1 : 0;
            }
    CHECK(failed == shared->second);
    CHECK(repeated == shared->second - 1); // the verdict of its one hash, repeated
}
