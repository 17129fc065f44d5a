// The reports of verify as evidence: what `verify --json` and the summary state about when,
// with what and under which keys an audit ran, and the files it examined (issue 17); and
// what sync's reports say of versions published with a problem or no longer verified.

#include "daemon/cli/report_output.hpp"

#include "core/catalog/errors.hpp"
#include "verify/errors.hpp"

#include <boost/json.hpp>
#include <doctest/doctest.h>

#include <string>

using namespace mirror;
namespace json = boost::json;

namespace {

// FIPS 180-2, appendix B.1: SHA-256("abc"). An independent value, not this build's hasher.
constexpr char const* abc_sha256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
constexpr char const* tip = "019a0000-0000-7000-8000-000000000002";
constexpr char const* root = "019a0000-0000-7000-8000-000000000001";

sync::audit_report sample_report() {
    sync::audit_report r;
    r.started_at = 1'700'000'000; // 2023-11-14T22:13:20Z
    r.head = "refs/heads/main";
    r.refs = {{"refs/heads/main", tip}, {"refs/tags/v1", root}};
    r.files.push_back(
        {"fdl.json", sync::file_role::fdl_json, 3, verify::sha256_of("abc"), sync::file_voucher::computed});
    sync::version_audit v;
    v.id = tip;
    v.seq = 2;
    v.reached_from = {"refs/heads/main"};
    v.signature = "valid";
    v.signer = verify::signer_info{"alice@example.org", "SHA256:alicekey", "ssh-ed25519", 3, ""};
    std::string folder = std::string("versions/") + tip + "/";
    v.files = {
        {folder + "version.json", sync::file_role::version_json, 3, verify::sha256_of("abc"),
         sync::file_voucher::signature},
        {folder + "version.json.sig", sync::file_role::signature, 5, verify::sha256_of("sig"),
         sync::file_voucher::computed},
        {folder + "ducklake.duckdb", sync::file_role::catalog, 4096, verify::sha256_of("catalog"),
         sync::file_voucher::version_json},
        {"data/main/t/a.parquet", sync::file_role::data_file, 1000, std::nullopt, sync::file_voucher::catalog},
        {"data/main/t/b.parquet", sync::file_role::data_file, std::nullopt, std::nullopt, sync::file_voucher::catalog,
         false},
    };
    v.data_files = 2;
    r.versions.push_back(v);
    return r;
}

daemon::audit_setup sample_setup() {
    daemon::audit_setup s;
    s.repository = "/srv/mirror";
    s.policy = verify::signature_policy::required;
    s.ns = "fdl";
    s.allowed_signers = "/etc/fdl-mirror/allowed_signers";
    s.allowed_signers_sha256 = verify::sha256_of("abc");
    s.tool = {"9.8.7", "0.12.2/openssl", true, "3.0.19"};
    return s;
}

json::object report_of(sync::audit_report const& r, daemon::audit_setup const& s) {
    return json::parse(daemon::audit_json(r, s)).as_object();
}

std::string text(json::value const& v) { return std::string(v.as_string()); }

} // namespace

TEST_CASE("verify --json states when the audit ran, with which tool, under which policy and keys") {
    auto doc = report_of(sample_report(), sample_setup());
    CHECK(text(doc.at("audited_at").at("utc")) == "2023-11-14T22:13:20Z");
    CHECK(doc.at("audited_at").at("unix_seconds").to_number<std::int64_t>() == 1'700'000'000);
    auto const& tool = doc.at("tool").as_object();
    CHECK(text(tool.at("name")) == "fdl-mirror");
    CHECK(text(tool.at("version")) == "9.8.7");
    CHECK(text(tool.at("libssh")) == "0.12.2/openssl");
    CHECK(tool.at("duckdb").as_bool());
    CHECK(text(tool.at("openssl")) == "3.0.19");
    auto const& policy = doc.at("policy").as_object();
    CHECK(text(policy.at("signatures")) == "required");
    CHECK(text(policy.at("namespace")) == "fdl");
    CHECK(text(policy.at("allowed_signers").at("path")) == "/etc/fdl-mirror/allowed_signers");
    CHECK(text(policy.at("allowed_signers").at("sha256")) == abc_sha256);
    CHECK(text(doc.at("head")) == "refs/heads/main");
    auto const& refs = doc.at("refs").as_object();
    CHECK(refs.size() == 2);
    CHECK(text(refs.at("refs/heads/main")) == tip);
    CHECK(text(refs.at("refs/tags/v1")) == root);
    auto const& files = doc.at("files").as_array();
    REQUIRE(files.size() == 1);
    CHECK(text(files[0].at("path")) == "fdl.json");
    CHECK(text(files[0].at("sha256")) == abc_sha256);
}

TEST_CASE("verify --json keeps its earlier fields, in their order, before the new ones") {
    auto doc = report_of(sample_report(), sample_setup());
    std::vector<std::string> keys;
    for (auto const& item : doc)
        keys.emplace_back(item.key());
    CHECK(keys == std::vector<std::string>{"command", "repository", "exit_code", "versions", "problems", "warnings",
                                           "elapsed_seconds", "unsigned_versions", "would_lose_trust", "keys",
                                           "fatal", "audited_at", "tool", "policy", "head", "refs", "files",
                                           "peak_rss_bytes", "catalog_readers_peak_rss_bytes", "partial"});
    auto const& v = doc.at("versions").as_array().at(0).as_object();
    for (auto const* field : {"id", "reached_from", "ok", "expired", "withdrawn", "tables", "data_files", "data_bytes",
                              "data_files_proven", "data_source", "problems", "signature", "seq", "signer", "catalog"})
        CHECK_MESSAGE(v.contains(field), field);
    auto const& signer = v.at("signer").as_object();
    CHECK(text(signer.at("fingerprint")) == "SHA256:alicekey");
    CHECK(text(signer.at("key_type")) == "ssh-ed25519");
    CHECK(text(signer.at("principals")) == "alice@example.org");
    CHECK(signer.at("allowed_signers_line").to_number<std::int64_t>() == 3);
    CHECK(signer.at("ca_fingerprint").is_null());
}

TEST_CASE("each version of verify --json has its digests whole and its manifest") {
    auto doc = report_of(sample_report(), sample_setup());
    auto const& v = doc.at("versions").as_array().at(0).as_object();
    auto const& digests = v.at("sha256").as_object();
    CHECK(text(digests.at("version.json")) == abc_sha256);
    CHECK(text(digests.at("version.json.sig")) == verify::to_hex(verify::sha256_of("sig")));
    CHECK(text(digests.at("catalog")) == verify::to_hex(verify::sha256_of("catalog")));
    CHECK(digests.at("dataset.json").is_null()); // not in this version
    CHECK(digests.at("files.json").is_null());
    CHECK(digests.at("expired.json").is_null());
    auto const& files = v.at("files").as_array();
    REQUIRE(files.size() == 5);
    auto const& record = files[0].as_object();
    CHECK(text(record.at("path")) == std::string("versions/") + tip + "/version.json");
    CHECK(text(record.at("role")) == "version.json");
    CHECK(record.at("size").to_number<std::int64_t>() == 3);
    CHECK(text(record.at("sha256")) == abc_sha256);
    CHECK(text(record.at("vouched_by")) == "version.json.sig");
    CHECK(record.at("ok").as_bool());
    CHECK(text(files[2].at("vouched_by")) == "version.json");
    auto const& data = files[3].as_object();
    CHECK(text(data.at("role")) == "data_file");
    CHECK(data.at("size").to_number<std::int64_t>() == 1000);
    CHECK(data.at("sha256").is_null()); // not hashed: only its size is checked
    CHECK(text(data.at("vouched_by")) == "catalog");
    auto const& missing = files[4].as_object();
    CHECK_FALSE(missing.at("ok").as_bool());
    CHECK(missing.at("size").is_null());
}

TEST_CASE("without keys, the policy names no allowed_signers") {
    auto setup = sample_setup();
    setup.policy = verify::signature_policy::off;
    setup.allowed_signers.reset();
    setup.allowed_signers_sha256.reset();
    auto doc = report_of(sample_report(), setup);
    CHECK(text(doc.at("policy").at("signatures")) == "off");
    CHECK(doc.at("policy").at("allowed_signers").is_null());
    setup.policy = verify::signature_policy::if_present;
    CHECK(text(report_of(sample_report(), setup).at("policy").at("signatures")) == "if-present");
}

TEST_CASE("a report never carries the user information of a location") {
    auto setup = sample_setup();
    setup.repository = "https://reader:s3cret@example.org/lake/";
    auto json_text = daemon::audit_json(sample_report(), setup);
    auto summary = daemon::audit_summary(sample_report(), setup);
    CHECK(json_text.find("s3cret") == std::string::npos);
    CHECK(summary.find("s3cret") == std::string::npos);
    CHECK(text(json::parse(json_text).at("repository")) == "https://***@example.org/lake/");
}

TEST_CASE("the verify summary shows the policy and the refs, --full-digests prints digests whole") {
    auto setup = sample_setup();
    auto summary = daemon::audit_summary(sample_report(), setup);
    CHECK(summary.find("policy: signatures required, namespace fdl, allowed_signers /etc/fdl-mirror/allowed_signers "
                       "(sha256 ba7816bf8f01…)\n") != std::string::npos);
    CHECK(summary.find("HEAD -> refs/heads/main\n") != std::string::npos);
    CHECK(summary.find(std::string("ref refs/heads/main -> ") + tip + "\n") != std::string::npos);
    CHECK(summary.find(std::string("ref refs/tags/v1 -> ") + root + "\n") != std::string::npos);
    CHECK(summary.find(abc_sha256) == std::string::npos);
    CHECK(summary.find("data/main/t/a.parquet") == std::string::npos);

    setup.full_digests = true;
    auto full = daemon::audit_summary(sample_report(), setup);
    CHECK(full.find(std::string("allowed_signers /etc/fdl-mirror/allowed_signers (sha256 ") + abc_sha256 + ")\n") !=
          std::string::npos);
    CHECK(full.find(std::string("    versions/") + tip + "/version.json: 3 bytes, sha256 " + abc_sha256 +
                    " (version.json.sig)\n") != std::string::npos);
    CHECK(full.find("    data/main/t/a.parquet: 1000 bytes, not hashed (catalog)\n") != std::string::npos);
    CHECK(full.find("    data/main/t/b.parquet: FAILED, size unknown, not hashed (catalog)\n") != std::string::npos);
    CHECK(full.find(std::string("fdl.json: 3 bytes, sha256 ") + abc_sha256 + " (computed)\n") != std::string::npos);
}

TEST_CASE("utc_text writes ISO 8601 in UTC") {
    CHECK(daemon::utc_text(0) == "1970-01-01T00:00:00Z");
    CHECK(daemon::utc_text(1'700'000'000) == "2023-11-14T22:13:20Z");
}

TEST_CASE("this_build names this program's version and libraries") {
    auto facts = daemon::this_build();
    CHECK_FALSE(facts.version.empty());
    CHECK_FALSE(facts.libssh.empty());
    CHECK_FALSE(facts.openssl.empty());
}

namespace {

/// A pass that published a version whose files.json disagrees with its catalog, and found
/// one published earlier (under --signatures off) that the policy now refuses.
sync::sync_report problems_report() {
    sync::sync_report r;
    r.published = {tip};
    r.published_with_problems.push_back(
        {tip, make_error(catalog::catalog_errc::index_disagrees,
                         std::string("versions/") + tip + "/files.json: lists data/main/t/c.parquet, the catalog does not")});
    r.unverified.push_back(
        {root, make_error(verify::verify_errc::missing_signature, std::string("versions/") + root + ": no signature")});
    r.versions_in_mirror = 2;
    return r;
}

} // namespace

TEST_CASE("sync --json and the summary report versions published with problems and versions not verified") {
    auto r = problems_report();
    auto doc = json::parse(daemon::sync_json(r, "/srv/origin", "/srv/mirror")).as_object();
    CHECK(doc.at("exit_code").to_number<int>() == 1); // both are problems, neither holds
    CHECK(doc.at("held").as_array().empty());
    auto const& with_problems = doc.at("published_with_problems").as_array();
    REQUIRE(with_problems.size() == 1);
    CHECK(text(with_problems[0].at("version")) == tip);
    CHECK(text(with_problems[0].at("kind")) == "catalog.index_disagrees");
    CHECK(text(with_problems[0].at("message")) ==
          std::string("versions/") + tip + "/files.json: lists data/main/t/c.parquet, the catalog does not");
    auto const& unverified = doc.at("unverified").as_array();
    REQUIRE(unverified.size() == 1);
    CHECK(text(unverified[0].at("version")) == root);
    CHECK(text(unverified[0].at("kind")) == "verify.missing_signature");
    CHECK(text(unverified[0].at("message")) == std::string("versions/") + root + ": no signature");

    auto summary = daemon::sync_summary(r, "/srv/origin", "/srv/mirror");
    CHECK(summary.find(std::string("published with problems (1):\n  ") + tip +
                       ": catalog.index_disagrees: versions/" + tip +
                       "/files.json: lists data/main/t/c.parquet, the catalog does not\n") != std::string::npos);
    CHECK(summary.find(std::string("published earlier, not accepted by the signature policy now (1):\n  ") + root +
                       ": verify.missing_signature: versions/" + root + ": no signature\n") != std::string::npos);

    // Without them, neither key holds an entry and the summary has neither section.
    sync::sync_report clean;
    clean.published = {tip};
    auto plain = json::parse(daemon::sync_json(clean, "/srv/origin", "/srv/mirror")).as_object();
    CHECK(plain.at("exit_code").to_number<int>() == 0);
    CHECK(plain.at("published_with_problems").as_array().empty());
    CHECK(plain.at("unverified").as_array().empty());
    auto plain_summary = daemon::sync_summary(clean, "/srv/origin", "/srv/mirror");
    CHECK(plain_summary.find("published with problems") == std::string::npos);
    CHECK(plain_summary.find("not accepted by the signature policy") == std::string::npos);
}
