// A mirror's attestation (issue 34): the statement of a mirror synced from a sample
// repository, signed with keys ssh-keygen made, in a DSSE envelope; checked as a consumer
// checks it (signature, trust, time, every ref and version.json) and, independently, by
// `ssh-keygen -Y verify` over the pre-authentication bytes.

#include "core/attest/check.hpp"
#include "core/attest/describe.hpp"
#include "core/attest/envelope.hpp"
#include "core/attest/errors.hpp"

#include "tests/component/helpers.hpp"
#include "tests/support/local_servers.hpp"
#include "tests/support/nginx.hpp"
#include "tests/support/run.hpp"
#include "tests/support/temp_dir.hpp"
#include "verify/allowed_signers.hpp"
#include "verify/errors.hpp"

#include "core/store/http_store.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <ctime>

using namespace mirror;
using namespace mirror::test;
using attest::attest_errc;
namespace fs = std::filesystem;

namespace {

std::int64_t unix_now() { return static_cast<std::int64_t>(std::time(nullptr)); }

struct attested_mirror {
    temp_dir tmp;
    publisher origin{tmp / "origin"};
    sample_repo sample = publish_sample(origin);
    fs::path mirror_root = tmp / "mirror";
    fs::path key = make_ssh_key(tmp / "keys", "mirror");
    event_loop run_on;
    std::unique_ptr<store::store> mirror;
    attest::remembered_versions memory;

    attested_mirror() {
        auto report = sync_folders(tmp / "origin", mirror_root);
        REQUIRE_MESSAGE(!report.fatal, describe(report));
        mirror = open_folder(mirror_root, true);
        fs::permissions(key, fs::perms::owner_read | fs::perms::owner_write);
    }

    verify::signing_key signing_key(fs::path const& file) {
        auto loaded = verify::signing_key::load(file);
        REQUIRE_MESSAGE(loaded.has_value(), (loaded ? "" : loaded.error().message));
        return std::move(*loaded);
    }

    attest::mirror_statement statement(std::int64_t now, std::chrono::seconds validity = std::chrono::hours(24)) {
        attest::statement_inputs inputs;
        inputs.origin = "https://user:secret@origin.example/repo/?X-Amz-Signature=abc";
        inputs.mirror = mirror_root.string();
        inputs.verified_at = now - 5;
        inputs.now = now;
        inputs.validity = validity;
        inputs.tool_version = "0.test";
        inputs.instance = "d1";
        inputs.fencing_token = 7;
        auto described = run_on(attest::describe_mirror(*mirror, inputs, memory));
        REQUIRE_MESSAGE(described.has_value(), (described ? "" : described.error().message));
        return *described;
    }

    /// Signs and writes the statement of the mirror now; returns the envelope's text.
    std::string attest(fs::path const& with, std::int64_t now, std::chrono::seconds validity = std::chrono::hours(24)) {
        auto envelope = attest::sign_statement(statement(now, validity), signing_key(with), attest::default_namespace);
        REQUIRE_MESSAGE(envelope.has_value(), (envelope ? "" : envelope.error().message));
        write_file(mirror_root / attest::attestation_key, *envelope);
        return *envelope;
    }

    attest::check_report check(std::string const& allowed, std::int64_t now,
                               std::optional<std::chrono::seconds> max_age = std::nullopt) {
        attest::check_settings settings;
        auto trusted = verify::parse_allowed_signers(allowed, "consumer_allowed_signers");
        REQUIRE(trusted.has_value());
        settings.trusted = std::move(*trusted);
        settings.now = now;
        settings.max_age = max_age;
        return run_on(attest::check_attestation(*mirror, settings));
    }

    std::string trusting(fs::path const& which, std::string const& options = "namespaces=\"fdl-mirror-attestation\"") {
        return allowed_line("mirror@example.org", which, options) + "\n";
    }
};

bool has_problem(attest::check_report const& report, attest_errc kind, std::string const& text = "") {
    return std::any_of(report.problems.begin(), report.problems.end(), [&](error const& e) {
        return e.code == kind && e.message.find(text) != std::string::npos;
    });
}

std::string problems_of(attest::check_report const& report) {
    std::string out;
    for (auto const& p : report.problems)
        out += p.message + "\n";
    return out;
}

} // namespace

TEST_CASE("PAE is DSSE's pre-authentication encoding") {
    CHECK(attest::pae("http://example.com/HelloWorld", "hello world") ==
          "DSSEv1 29 http://example.com/HelloWorld 11 hello world");
    CHECK(attest::pae("", "") == "DSSEv1 0  0 ");
}

TEST_CASE("a statement states every ref and version of the mirror, and reads back as written") {
    attested_mirror m;
    auto const now = unix_now();
    auto s = m.statement(now);
    CHECK(s.refs.size() == 3);
    CHECK(s.versions.size() == 4);
    CHECK(s.repository_id == "5f0c8a52-6d3e-4f8e-9b1a-2c7d4e9f0a13");
    CHECK(s.origin == "https://origin.example/repo/"); // neither the password nor the query
    CHECK(s.expires == now - 5 + 24 * 3600);
    auto main = std::find_if(s.refs.begin(), s.refs.end(), [](auto const& r) { return r.name == "refs/heads/main"; });
    REQUIRE(main != s.refs.end());
    CHECK(main->version == m.sample.main.back());
    CHECK(main->version_json_sha256 ==
          verify::to_hex(verify::sha256_of(read_file(m.mirror_root / "versions" / main->version / "version.json"))));
    auto text = attest::render_statement(s);
    auto parsed = attest::parse_statement(text);
    REQUIRE_MESSAGE(parsed.has_value(), (parsed ? "" : parsed.error().message));
    CHECK(*parsed == s);

    SUBCASE("another statement type, or a field of the wrong form, is malformed and named") {
        auto swap = [&](std::string const& from, std::string const& to) {
            std::string changed = text;
            changed.replace(changed.find(from), from.size(), to);
            return attest::parse_statement(changed);
        };
        auto other_type = swap("mirror-state:v1", "mirror-state:v9");
        REQUIRE_FALSE(other_type.has_value());
        CHECK(other_type.error().code == attest_errc::malformed);
        CHECK(other_type.error().message.find("predicateType") != std::string::npos);
        auto bad_time = swap("\"expires\":\"", "\"expires\":\"x");
        REQUIRE_FALSE(bad_time.has_value());
        CHECK(bad_time.error().message.find("expires") != std::string::npos);
        auto bad_digest = swap(main->version_json_sha256, main->version_json_sha256.substr(1) + "G");
        REQUIRE_FALSE(bad_digest.has_value());
        CHECK(bad_digest.error().code == attest_errc::malformed);
    }
}

TEST_CASE("an attested mirror passes the consumer's check, and ssh-keygen accepts the signature over the PAE bytes") {
    attested_mirror m;
    auto const now = unix_now();
    for (std::string type : {"ed25519", "ecdsa"}) {
        CAPTURE(type);
        auto key = make_ssh_key(m.tmp / "keys", "mirror-" + type, type);
        fs::permissions(key, fs::perms::owner_read | fs::perms::owner_write);
        auto envelope = m.attest(key, now);
        auto report = m.check(m.trusting(key), now);
        CHECK_MESSAGE(report.ok(), problems_of(report));
        REQUIRE(report.signer);
        CHECK(report.signer->principals == "mirror@example.org");
        CHECK(report.refs_checked == 3);
        CHECK(report.versions_checked == 4);

        // The same bytes, checked by OpenSSH alone: the payload's PAE and the armored sig.
        auto opened = attest::parse_envelope(envelope);
        REQUIRE(opened.has_value());
        write_file(m.tmp / "pae", attest::pae(opened->payload_type, opened->payload));
        write_file(m.tmp / "pae.sig", attest::armor_sshsig(opened->signatures.at(0).sig));
        write_file(m.tmp / "allowed", m.trusting(key));
        auto checked = run_shell("ssh-keygen -Y verify -f '" + (m.tmp / "allowed").string() +
                                 "' -I mirror@example.org -n fdl-mirror-attestation -s '" + (m.tmp / "pae.sig").string() +
                                 "' < '" + (m.tmp / "pae").string() + "' 2>&1");
        CHECK_MESSAGE(checked.exit_code == 0, checked.out);
        // ... and refuses it for a version's namespace: the two signatures cannot stand for each other.
        auto other_ns = run_shell("ssh-keygen -Y verify -f '" + (m.tmp / "allowed").string() +
                                  "' -I mirror@example.org -n fdl -s '" + (m.tmp / "pae.sig").string() + "' < '" +
                                  (m.tmp / "pae").string() + "' 2>&1");
        CHECK(other_ns.exit_code != 0);
    }
}

TEST_CASE("each failure has its reason: missing, bad signature, untrusted key, expired, stale, mismatch") {
    attested_mirror m;
    auto const now = unix_now();
    auto stranger = make_ssh_key(m.tmp / "keys", "stranger");

    SUBCASE("missing") {
        auto report = m.check(m.trusting(m.key), now);
        CHECK(has_problem(report, attest_errc::missing, ".fdl-mirror/attestation.json"));
    }
    SUBCASE("a key the consumer does not trust") {
        m.attest(m.key, now);
        auto report = m.check(m.trusting(stranger), now);
        CHECK_MESSAGE(has_problem(report, attest_errc::untrusted_key), problems_of(report));
        CHECK_FALSE(report.statement); // nothing of an untrusted statement is read
    }
    SUBCASE("a key trusted for versions only") {
        m.attest(m.key, now);
        auto report = m.check(m.trusting(m.key, "namespaces=\"fdl\""), now);
        CHECK_MESSAGE(has_problem(report, attest_errc::untrusted_key), problems_of(report));
    }
    SUBCASE("a payload changed after signing") {
        auto text = m.attest(m.key, now);
        auto envelope = attest::parse_envelope(text);
        REQUIRE(envelope.has_value());
        auto at = envelope->payload.find("\"instance\":\"d1\"");
        REQUIRE(at != std::string::npos);
        envelope->payload.replace(at, 15, "\"instance\":\"d2\"");
        write_file(m.mirror_root / attest::attestation_key, attest::render_envelope(*envelope));
        auto report = m.check(m.trusting(m.key), now);
        CHECK_MESSAGE(has_problem(report, attest_errc::bad_signature), problems_of(report));
    }
    SUBCASE("past its expiry") {
        m.attest(m.key, now - 3600, std::chrono::seconds(600));
        auto report = m.check(m.trusting(m.key), now);
        CHECK_MESSAGE(has_problem(report, attest_errc::expired, "expired at"), problems_of(report));
    }
    SUBCASE("older than --max-age: an attestation of an hour before, put back") {
        auto old = m.attest(m.key, now - 3600);
        m.attest(m.key, now);
        write_file(m.mirror_root / attest::attestation_key, old);
        auto report = m.check(m.trusting(m.key), now, std::chrono::seconds(1800));
        CHECK_MESSAGE(has_problem(report, attest_errc::stale, "more than --max-age"), problems_of(report));
        CHECK(m.check(m.trusting(m.key), now, std::chrono::seconds(7200)).ok());
    }
    SUBCASE("a ref moved in the mirror after the attestation is named") {
        m.attest(m.key, now);
        write_file(m.mirror_root / "refs/heads/main", m.sample.main.front());
        auto report = m.check(m.trusting(m.key), now);
        CHECK_MESSAGE(has_problem(report, attest_errc::mismatch, "refs/heads/main: names " + m.sample.main.front()),
                      problems_of(report));
    }
    SUBCASE("a version.json replaced in the mirror is named") {
        m.attest(m.key, now);
        auto const id = m.sample.main.front();
        auto file = m.mirror_root / "versions" / id / "version.json";
        write_file(file, read_file(file) + " ");
        auto report = m.check(m.trusting(m.key), now);
        CHECK_MESSAGE(has_problem(report, attest_errc::mismatch, "versions/" + id + "/version.json"),
                      problems_of(report));
        // ... and the daemon does not attest it again: the ref v1 names it.
        attest::statement_inputs inputs;
        inputs.mirror = m.mirror_root.string();
        inputs.now = now;
        auto again = m.run_on(attest::describe_mirror(*m.mirror, inputs, m.memory));
        REQUIRE_FALSE(again.has_value());
        CHECK(again.error().code == attest_errc::mismatch);
        CHECK(again.error().message.find("refs/tags/v1") != std::string::npos);
    }
    SUBCASE("a refs.json that disagrees with refs/ is named: readers over HTTP go by it") {
        m.attest(m.key, now);
        write_file(m.mirror_root / "refs.json",
                   R"({"HEAD":"ref: refs/heads/main","refs":{"refs/heads/main":")" + m.sample.main.front() + "\"}}\n");
        auto report = m.check(m.trusting(m.key), now);
        CHECK_MESSAGE(
            has_problem(report, attest_errc::mismatch, "refs.json says refs/heads/main is " + m.sample.main.front()),
            problems_of(report));
        CHECK_MESSAGE(has_problem(report, attest_errc::mismatch, "refs.json lacks refs/tags/v1"), problems_of(report));
        fs::remove(m.mirror_root / "refs.json");
        report = m.check(m.trusting(m.key), now);
        CHECK_MESSAGE(has_problem(report, attest_errc::mismatch, "refs.json: not found"), problems_of(report));
    }
    SUBCASE("a ref added in the mirror is named") {
        m.attest(m.key, now);
        write_file(m.mirror_root / "refs/heads/extra", m.sample.main.front());
        auto report = m.check(m.trusting(m.key), now);
        CHECK_MESSAGE(has_problem(report, attest_errc::mismatch, "refs/heads/extra: in the mirror"),
                      problems_of(report));
    }
}

TEST_CASE("key rotation through valid-after and valid-before in the consumer's file") {
    attested_mirror m;
    auto const now = unix_now();
    auto next = make_ssh_key(m.tmp / "keys", "next");
    fs::permissions(next, fs::perms::owner_read | fs::perms::owner_write);
    auto stamp = [](std::int64_t t) {
        std::time_t tt = static_cast<std::time_t>(t);
        std::tm parts{};
        gmtime_r(&tt, &parts);
        char text[32];
        std::strftime(text, sizeof text, "%Y%m%d%H%M%SZ", &parts);
        return std::string(text);
    };
    // The old key until now + 1 h, the new one from now + 10 min: they overlap.
    std::string const rotation =
        m.trusting(m.key, "namespaces=\"fdl-mirror-attestation\",valid-before=\"" + stamp(now + 3600) + "\"") +
        m.trusting(next, "namespaces=\"fdl-mirror-attestation\",valid-after=\"" + stamp(now + 600) + "\"");
    m.attest(m.key, now);
    CHECK(m.check(rotation, now).ok());
    m.attest(next, now);
    CHECK(has_problem(m.check(rotation, now), attest_errc::untrusted_key)); // not yet valid
    CHECK_MESSAGE(m.check(rotation, now + 1200).ok(), problems_of(m.check(rotation, now + 1200)));
    m.attest(m.key, now);
    CHECK(m.check(rotation, now + 1200).ok());                                  // in the overlap
    CHECK(has_problem(m.check(rotation, now + 7200), attest_errc::untrusted_key)); // retired
}

TEST_CASE("a restarted daemon takes what its own key attested of the versions, and nothing another key signed") {
    attested_mirror m;
    auto const now = unix_now();
    m.attest(m.key, now);
    auto key = m.signing_key(m.key);
    auto remembered = m.run_on(attest::remembered_from_mirror(*m.mirror, key, std::string(attest::default_namespace)));
    CHECK(remembered.size() == 4);
    auto stranger_file = make_ssh_key(m.tmp / "keys", "stranger");
    fs::permissions(stranger_file, fs::perms::owner_read | fs::perms::owner_write);
    auto stranger = m.signing_key(stranger_file);
    CHECK(m.run_on(attest::remembered_from_mirror(*m.mirror, stranger, std::string(attest::default_namespace)))
              .empty());
}

TEST_CASE("the mirror's key is refused when others may read it, encrypted, or not a key, with the file named") {
    temp_dir tmp;
    auto key = make_ssh_key(tmp / "keys", "k");
    fs::permissions(key, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
    auto exposed = verify::signing_key::load(key);
    REQUIRE_FALSE(exposed.has_value());
    CHECK(exposed.error().code == verify::verify_errc::unusable_signing_key);
    CHECK(exposed.error().message.find(key.string()) != std::string::npos);
    CHECK(exposed.error().message.find("others than its owner") != std::string::npos);

    auto encrypted = tmp / "keys" / "encrypted";
    REQUIRE(run_shell("ssh-keygen -q -t ed25519 -N passphrase -f '" + encrypted.string() + "'").exit_code == 0);
    auto locked = verify::signing_key::load(encrypted);
    REQUIRE_FALSE(locked.has_value());
    CHECK(locked.error().message.find("unencrypted") != std::string::npos);

    write_file(tmp / "keys" / "text", "not a key\n");
    fs::permissions(tmp / "keys" / "text", fs::perms::owner_read);
    CHECK_FALSE(verify::signing_key::load(tmp / "keys" / "text").has_value());
    CHECK_FALSE(verify::signing_key::load(tmp / "keys" / "absent").has_value());
}

TEST_CASE("a mirror its readers reach over HTTP is checked through refs.json and the attested versions") {
    attested_mirror m;
    auto const now = unix_now();
    m.attest(m.key, now);
    nginx_server nginx{nginx_options{m.mirror_root}};
    store::http_store_settings settings;
    settings.allow_plain_http = true;
    auto opened = store::http_store::open(nginx.url(), settings);
    REQUIRE(opened.has_value());
    auto trusted = verify::parse_allowed_signers(m.trusting(m.key), "consumer");
    REQUIRE(trusted.has_value());
    attest::check_settings check;
    check.trusted = std::move(*trusted);
    check.now = now;
    auto report = m.run_on(attest::check_attestation(**opened, check));
    CHECK_MESSAGE(report.ok(), problems_of(report));
    CHECK(report.refs_checked == 3);
    CHECK(report.versions_checked == 4); // each attested version, read by its id

    auto const id = m.sample.main.front();
    auto file = m.mirror_root / "versions" / id / "version.json";
    write_file(file, read_file(file) + " ");
    auto changed = m.run_on(attest::check_attestation(**opened, check));
    CHECK_MESSAGE(has_problem(changed, attest_errc::mismatch, "versions/" + id + "/version.json"), problems_of(changed));
    std::filesystem::remove(file);
    auto gone = m.run_on(attest::check_attestation(**opened, check));
    CHECK_MESSAGE(has_problem(gone, attest_errc::mismatch, "versions/" + id + ": attested, absent from the mirror"),
                  problems_of(gone));
}
