// The publish gate's signature policy, with signatures made by ssh-keygen and keys from
// an allowed_signers file given out of band.

#include "verify/signature_policy.hpp"

#include "tests/component/helpers.hpp"
#include "tests/support/run.hpp"
#include "tests/support/temp_dir.hpp"
#include "verify/allowed_signers.hpp"
#include "verify/errors.hpp"
#include "verify/ssh_key.hpp"

#include <doctest/doctest.h>

using namespace mirror;
using namespace mirror::test;
using verify::verify_errc;
namespace fs = std::filesystem;

namespace {

struct signed_repo {
    temp_dir tmp;
    publisher origin{tmp / "origin"};
    sample_repo sample = publish_sample(origin);
    fs::path mirror = tmp / "mirror";
    fs::path alice = make_ssh_key(tmp / "keys", "alice");
    fs::path mallory = make_ssh_key(tmp / "keys", "mallory");
    std::vector<std::string> all_versions() const {
        auto v = sample.main;
        v.push_back(sample.dev_tip);
        return v;
    }

    sync::sync_options options(verify::signature_policy policy, std::string const& allowed_text) {
        sync::sync_options o;
        o.trust.policy = policy;
        auto signers = verify::parse_allowed_signers(allowed_text, "allowed_signers");
        REQUIRE(signers.has_value());
        o.trust.signers = std::move(*signers);
        return o;
    }
    sync::sync_report pass(sync::sync_options o) { return sync_folders(tmp / "origin", mirror, o); }
    sync::sync_report required() { return pass(options(verify::signature_policy::required, allowed_line("alice@example.org", alice))); }
};

/// The SHA256 fingerprint of the key in `public_key_file`, as OpenSSH prints it.
std::string fingerprint_of(fs::path const& public_key_file) {
    auto signers = verify::parse_allowed_signers("x " + read_file(public_key_file), "key");
    REQUIRE(signers.has_value());
    REQUIRE(signers->entries.size() == 1);
    return verify::fingerprint({signers->entries[0].key_type, signers->entries[0].key_blob});
}

bool held_for(sync::sync_report const& r, std::string const& id, verify_errc why) {
    return std::any_of(r.held.begin(), r.held.end(), [&](auto const& h) { return h.id == id && h.why.code == why; });
}

} // namespace

TEST_CASE_FIXTURE(signed_repo, "required: versions signed by a trusted key are published, with their signer") {
    for (auto const& id : all_versions())
        origin.sign(id, alice);
    auto r = required();
    INFO(describe(r));
    CHECK(r.exit_code() == 0);
    CHECK(r.published.size() == 4);
    REQUIRE(r.signers.size() == 4);
    CHECK(r.signers.at(sample.dev_tip).principals == "alice@example.org");
    CHECK(r.signers.at(sample.dev_tip).fingerprint.starts_with("SHA256:"));
    CHECK(read_file(mirror / "versions" / sample.dev_tip / "version.json.sig") ==
          read_file(origin.version_dir(sample.dev_tip) / "version.json.sig"));
}

TEST_CASE_FIXTURE(signed_repo, "required: unsigned, untrusted, tampered and wrong-namespace versions are held, each saying why") {
    origin.sign(sample.main[0], alice);
    origin.sign(sample.main[1], alice);
    origin.sign(sample.main[2], alice);
    verify_errc expected{};
    std::string key; // the key the held message names, when the signature names one
    SUBCASE("missing") { expected = verify_errc::missing_signature; }
    SUBCASE("untrusted key") {
        origin.sign(sample.dev_tip, mallory);
        expected = verify_errc::untrusted_key;
        key = fingerprint_of(mallory.string() + ".pub");
    }
    SUBCASE("wrong namespace") {
        origin.sign(sample.dev_tip, alice, "file");
        expected = verify_errc::namespace_mismatch;
        key = fingerprint_of(alice.string() + ".pub");
    }
    SUBCASE("version.json changed after signing") {
        origin.sign(sample.dev_tip, alice);
        auto record = read_file(origin.version_dir(sample.dev_tip) / "version.json");
        record.replace(record.find("on dev"), 6, "on DEV");
        write_file(origin.version_dir(sample.dev_tip) / "version.json", record);
        expected = verify_errc::bad_signature;
        key = fingerprint_of(alice.string() + ".pub");
    }
    SUBCASE("garbage signature") {
        write_file(origin.version_dir(sample.dev_tip) / "version.json.sig", "not a signature");
        expected = verify_errc::malformed_armor;
    }
    auto r = required();
    INFO(describe(r));
    CHECK(held_for(r, sample.dev_tip, expected));
    for (auto const& h : r.held)
        if (h.id == sample.dev_tip && !key.empty())
            CHECK_MESSAGE(h.why.message.find("key " + key) != std::string::npos, h.why.message);
    CHECK(r.exit_code() == 1);
    CHECK(r.published.size() == 3);
    CHECK(ref_of(mirror, "refs/heads/dev").empty());
    CHECK(!fs::exists(mirror / "versions" / sample.dev_tip));
    CHECK(reader_visible_problems(mirror).empty());
}

TEST_CASE_FIXTURE(signed_repo, "required: a key outside its validity window or namespaces does not sign") {
    for (auto const& id : all_versions())
        origin.sign(id, alice);
    std::string key_options;
    verify_errc expected{};
    SUBCASE("expired key") {
        key_options = "valid-before=\"20200101Z\"";
        expected = verify_errc::outside_validity;
    }
    SUBCASE("namespace not allowed") {
        key_options = "namespaces=\"file\"";
        expected = verify_errc::namespace_not_allowed;
    }
    auto r = pass(options(verify::signature_policy::required, allowed_line("alice@example.org", alice, key_options)));
    CHECK(held_for(r, sample.main.front(), expected));
    CHECK(r.published.empty());
}

TEST_CASE_FIXTURE(signed_repo, "a version held for a missing signature is published once a valid one appears") {
    auto first = required();
    CHECK(held_for(first, sample.main.front(), verify_errc::missing_signature));
    CHECK(first.published.empty());
    for (auto const& id : all_versions())
        origin.sign(id, alice);
    auto second = required();
    INFO(describe(second));
    CHECK(second.exit_code() == 0);
    CHECK(second.published.size() == 4);
}

TEST_CASE_FIXTURE(signed_repo, "if-present: unsigned versions pass, invalid ones are held, late signatures are checked") {
    auto policy = options(verify::signature_policy::if_present, allowed_line("alice@example.org", alice));
    origin.sign(sample.main[1], mallory); // an untrusted signature holds main[1] and what follows it
    auto r = pass(policy);
    CHECK(held_for(r, sample.main[1], verify_errc::untrusted_key));
    CHECK(r.published == std::vector<std::string>{sample.main.front()});

    fs::remove(origin.version_dir(sample.main[1]) / "version.json.sig");
    REQUIRE(pass(policy).exit_code() == 0);
    // A late signature by a trusted key is added; one by an untrusted key is not.
    origin.sign(sample.main[2], alice);
    origin.sign(sample.dev_tip, mallory);
    auto late = pass(policy);
    INFO(describe(late));
    CHECK(fs::exists(mirror / "versions" / sample.main[2] / "version.json.sig"));
    CHECK(!fs::exists(mirror / "versions" / sample.dev_tip / "version.json.sig"));
    CHECK(late.signers.contains(sample.main[2]));
    // The one that does not verify is a problem of its version, as verify of the origin
    // counts it: exit 1, and reported as unverified (and so in the metrics and alerts).
    CHECK(late.exit_code() == 1);
    CHECK(std::any_of(late.unverified.begin(), late.unverified.end(), [&](auto const& u) {
        return u.id == sample.dev_tip && u.why.code == verify_errc::untrusted_key &&
               u.why.message.find("version.json.sig: added at the origin, not taken") != std::string::npos;
    }));
    CHECK(held_for(late, sample.dev_tip, verify_errc::untrusted_key) == false); // published, not held
    // Until the origin takes the bad signature back, every pass says so.
    CHECK(pass(policy).exit_code() == 1);
    fs::remove(origin.version_dir(sample.dev_tip) / "version.json.sig");
    CHECK(pass(policy).exit_code() == 0);
}

TEST_CASE_FIXTURE(signed_repo, "fdl.json's signers are compared with the trusted keys, never trusted") {
    origin.announce_signers({allowed_line("mallory@example.org", mallory)});
    for (auto const& id : all_versions())
        origin.sign(id, mallory);
    auto r = required();
    // Announced by the origin, but not configured here: nothing is trusted because of it.
    CHECK(held_for(r, sample.main.front(), verify_errc::untrusted_key));
    REQUIRE(r.announced_keys.announced_not_trusted.size() == 1);
    CHECK(r.announced_keys.announced_not_trusted[0].find("mallory@example.org") != std::string::npos);
    REQUIRE(r.announced_keys.trusted_not_announced.size() == 1);
    CHECK(r.announced_keys.trusted_not_announced[0].find("alice@example.org") != std::string::npos);
}

TEST_CASE_FIXTURE(signed_repo, "the report names signers only of versions it published") {
    for (auto const& id : all_versions())
        origin.sign(id, alice);
    write_file(origin.version_dir(sample.dev_tip) / "ducklake.duckdb", "tampered after signing");
    auto r = required();
    CHECK(r.published.size() == 3);
    CHECK(!r.signers.contains(sample.dev_tip));
    CHECK(r.signers.size() == 3);
}

TEST_CASE_FIXTURE(signed_repo, "versions signed with a certificate from a trusted CA are published") {
    auto ca = make_ssh_key(tmp / "keys", "ca");
    std::string certify = "ssh-keygen -q -s '" + ca.string() + "' -I alice -n alice@example.org '" + alice.string() +
                          ".pub' 2>/dev/null";
    REQUIRE(std::system(certify.c_str()) == 0);
    fs::path certificate = alice.string() + "-cert.pub";
    for (auto const& id : all_versions())
        origin.sign(id, certificate);
    SUBCASE("the CA is trusted") {
        auto trusted = options(verify::signature_policy::required, allowed_line("*@example.org", ca, "cert-authority"));
        auto r = pass(trusted);
        INFO(describe(r));
        CHECK(r.exit_code() == 0);
        CHECK(r.published.size() == 4);
        REQUIRE(r.signers.contains(sample.dev_tip));
        CHECK(r.signers.at(sample.dev_tip).principals == "alice@example.org"); // the certificate's
        // Revoking the CA would cost every version its trusted signature.
        auto ca_pub = read_file(ca.string() + ".pub");
        auto first = ca_pub.find(' ');
        auto ca_key = verify::parse_public_key_text(ca_pub.substr(0, first),
                                                    ca_pub.substr(first + 1, ca_pub.find(' ', first + 1) - first - 1));
        REQUIRE(ca_key.has_value());
        sync::audit_options audit{trusted.trust, {verify::fingerprint(*ca_key)}};
        auto repo = open_folder(mirror, false);
        auto report = run(sync::run_audit(*repo, nullptr, nullptr, audit));
        CHECK(report.exit_code() == 0);
        CHECK(report.would_lose_trust.size() == 4);
        REQUIRE(report.keys.size() == 1);
        CHECK(report.keys[0].fingerprint == verify::fingerprint(*ca_key));
    }
    SUBCASE("the CA's key is listed, but not as cert-authority") {
        auto r = pass(options(verify::signature_policy::required, allowed_line("*@example.org", ca)));
        CHECK(held_for(r, sample.main.front(), verify_errc::untrusted_key));
    }
    SUBCASE("only alice's own key is listed") {
        auto r = required();
        CHECK(held_for(r, sample.main.front(), verify_errc::untrusted_key));
    }
}

TEST_CASE_FIXTURE(signed_repo, "an audit of a signed mirror names each damage precisely") {
    for (auto const& id : all_versions())
        origin.sign(id, alice);
    REQUIRE(required().exit_code() == 0);
    sync::audit_options audit;
    audit.trust = options(verify::signature_policy::required, allowed_line("alice@example.org", alice)).trust;
    auto audit_mirror = [&] {
        auto repo = open_folder(mirror, false);
        return run(sync::run_audit(*repo, nullptr, nullptr, audit));
    };
    auto clean = audit_mirror();
    CHECK(clean.exit_code() == 0);
    CHECK(clean.unsigned_versions.empty());
    REQUIRE(clean.keys.size() == 1);
    CHECK(clean.keys[0].versions == 4);

    auto dir = [&](std::string const& id) { return mirror / "versions" / id; };
    fs::remove(mirror / "data/main/population/ducklake-0004.parquet");               // dev's data file
    write_file(dir(sample.main[2]) / "ducklake.duckdb", "altered catalog");           // main[2]
    auto record = read_file(dir(sample.main[1]) / "version.json");                    // main[1]
    record.replace(record.find("second"), 6, "SECOND");
    write_file(dir(sample.main[1]) / "version.json", record);
    fs::remove(dir(sample.main[0]) / "version.json.sig");                             // main[0]
    auto damaged = audit_mirror();
    CHECK(damaged.exit_code() == 1);
    auto problems_of = [&](std::string const& id) {
        std::string all;
        for (auto const& v : damaged.versions)
            if (v.id == id)
                for (auto const& p : v.problems)
                    all += sync::kind_of(p.code) + ": " + p.message + "\n";
        return all;
    };
    CHECK(problems_of(sample.dev_tip).find("ducklake-0004.parquet: missing") != std::string::npos);
    CHECK(problems_of(sample.main[2]).find("ducklake.duckdb: size is 15 bytes") != std::string::npos);
    CHECK(problems_of(sample.main[1]).find("verify.bad_signature") != std::string::npos);
    CHECK(problems_of(sample.main[0]).find("verify.missing_signature") != std::string::npos);
    CHECK(damaged.unsigned_versions.size() == 2); // main[1] (bad) and main[0] (removed)
}

TEST_CASE_FIXTURE(signed_repo, "a version withdrawn before its first copy is mirrored as it is, its signature unchecked") {
    for (auto const& id : all_versions())
        origin.sign(id, alice);
    origin.expire(sample.main[1], true); // reduces version.json: the old signature no longer matches
    auto r = required();
    INFO(describe(r));
    CHECK(r.exit_code() == 0);
    CHECK(r.published.size() == 4);
    CHECK(!r.signers.contains(sample.main[1]));
    CHECK(fs::exists(mirror / "versions" / sample.main[1] / "expired.json"));
}

TEST_CASE_FIXTURE(signed_repo, "a published version's signature replaced at the origin is a violation, the mirror "
                               "keeps its own") {
    for (auto const& id : all_versions())
        origin.sign(id, alice);
    REQUIRE(required().exit_code() == 0);
    auto published = read_file(mirror / "versions" / sample.dev_tip / "version.json.sig");
    // Another key of the same type: a signature of the same size, other bytes.
    fs::remove(origin.version_dir(sample.dev_tip) / "version.json.sig");
    origin.sign(sample.dev_tip, mallory);
    REQUIRE(read_file(origin.version_dir(sample.dev_tip) / "version.json.sig").size() == published.size());
    auto r = required();
    INFO(describe(r));
    CHECK(r.exit_code() == 1);
    CHECK(violated(r, sync::sync_errc::version_rewritten,
                   "versions/" + sample.dev_tip +
                       "/version.json.sig: the origin now serves another signature than the one published"));
    CHECK(read_file(mirror / "versions" / sample.dev_tip / "version.json.sig") == published);
    CHECK(r.unverified.empty()); // the mirror's own copy still verifies
}

TEST_CASE_FIXTURE(signed_repo, "a mirror published without signatures, synced with required, reports each version "
                               "the policy does not accept") {
    origin.sign(sample.main[0], alice);
    origin.sign(sample.main[1], mallory);
    REQUIRE(pass({}).exit_code() == 0); // signatures off: all four published
    auto r = required();
    INFO(describe(r));
    CHECK(r.exit_code() == 1);
    CHECK(r.published.empty());
    REQUIRE(r.unverified.size() == 3);
    std::map<std::string, boost::system::error_code> why;
    for (auto const& u : r.unverified)
        why[u.id] = u.why.code;
    CHECK(!why.contains(sample.main[0]));
    CHECK(why.at(sample.main[1]) == verify_errc::untrusted_key);
    CHECK(why.at(sample.main[2]) == verify_errc::missing_signature);
    CHECK(why.at(sample.dev_tip) == verify_errc::missing_signature);
    // Once the origin signs them, the late signatures are taken and nothing is reported.
    fs::remove(origin.version_dir(sample.main[1]) / "version.json.sig");
    for (auto const& id : {sample.main[1], sample.main[2], sample.dev_tip})
        origin.sign(id, alice);
    auto mended = required();
    INFO(describe(mended));
    CHECK(mended.unverified.size() == 1); // main[1]: the mirror keeps mallory's signature
    CHECK(violated(mended, sync::sync_errc::version_rewritten, sample.main[1] + "/version.json.sig"));
}

TEST_CASE_FIXTURE(signed_repo, "a line of allowed_signers that does not parse is skipped with a warning, the others "
                               "still trust their keys") {
    for (auto const& id : all_versions())
        origin.sign(id, alice);
    std::string keys = "mallory@example.org frobnicate " + allowed_line("x", mallory).substr(2) + "\n" +
                       allowed_line("alice@example.org", alice) + "\n";
    auto r = pass(options(verify::signature_policy::required, keys));
    INFO(describe(r));
    CHECK(r.exit_code() == 0);
    CHECK(r.published.size() == 4);
    CHECK(r.allowed_signers_skipped == 1);
    CHECK(std::any_of(r.warnings.begin(), r.warnings.end(), [](std::string const& w) {
        return w.starts_with("allowed_signers:1: ") && w.find("frobnicate") != std::string::npos &&
               w.ends_with("(this line of allowed_signers is skipped: it grants nothing)");
    }));
}
