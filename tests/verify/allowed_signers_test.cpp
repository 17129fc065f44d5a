#include "verify/allowed_signers.hpp"
#include <doctest/doctest.h>

#include "tests/support/results.hpp"

#include "tests/support/temp_dir.hpp"
#include "verify/errors.hpp"
#include "verify/ssh_wire.hpp"

#include <cstdlib>
#include <ctime>
#include <fstream>

using namespace mirror;
using namespace mirror::verify;

// Expected behaviour: ssh-keygen(1) ALLOWED SIGNERS and OpenSSH 9.2's sshsig.c
// (sshsigopt_parse, check_allowed_keys_line) and misc.c (parse_absolute_time).

namespace {

struct key_text {
    std::string type, base64, line_key; // "ssh-ed25519", "AAAA…", "ssh-ed25519 AAAA…"
    ssh_public_key key;
};

/// A fresh ed25519 key made by ssh-keygen, read back from its .pub file.
key_text make_key(test::temp_dir const& dir, std::string const& name) {
    std::string path = (dir / name).string();
    std::string command = "ssh-keygen -t ed25519 -N '' -q -f '" + path + "' </dev/null";
    REQUIRE(std::system(command.c_str()) == 0);
    std::ifstream in(path + ".pub");
    key_text out;
    in >> out.type >> out.base64;
    REQUIRE(out.type == "ssh-ed25519");
    auto key = parse_public_key_text(out.type, out.base64);
    REQUIRE(key.has_value());
    out.key = *key;
    out.line_key = out.type + " " + out.base64;
    return out;
}

struct keys {
    test::temp_dir dir;
    key_text a = make_key(dir, "a"), b = make_key(dir, "b"), c = make_key(dir, "c"), other = make_key(dir, "d");
};

allowed_signers parse_ok(std::string const& text) {
    auto parsed = parse_allowed_signers(text, "conf/allowed_signers");
    REQUIRE_MESSAGE(parsed.has_value(), (parsed ? std::string() : parsed.error().message));
    return *parsed;
}

template <class T>
std::string kind(result<T> const& r) {
    return mirror::test::verify_kind_of(r);
}

std::int64_t utc(int y, int mo, int d, int h = 0, int mi = 0, int s = 0) {
    std::tm tm{};
    tm.tm_year = y - 1900, tm.tm_mon = mo - 1, tm.tm_mday = d, tm.tm_hour = h, tm.tm_min = mi, tm.tm_sec = s;
    return static_cast<std::int64_t>(::timegm(&tm));
}

std::int64_t local(int y, int mo, int d, int h = 0, int mi = 0, int s = 0) {
    std::tm tm{};
    tm.tm_year = y - 1900, tm.tm_mon = mo - 1, tm.tm_mday = d, tm.tm_hour = h, tm.tm_min = mi, tm.tm_sec = s;
    tm.tm_isdst = -1;
    return static_cast<std::int64_t>(std::mktime(&tm));
}

/// Runs a test in a zone that is not UTC, so "local" and "Z" differ; restores TZ after.
struct zone_guard {
    std::string saved;
    bool had = false;
    explicit zone_guard(char const* zone) {
        if (char const* tz = std::getenv("TZ"))
            saved = tz, had = true;
        ::setenv("TZ", zone, 1);
        ::tzset();
    }
    ~zone_guard() {
        had ? ::setenv("TZ", saved.c_str(), 1) : ::unsetenv("TZ");
        ::tzset();
    }
};

constexpr std::int64_t mid_2025 = 1'750'000'000; // 2025-06-15T15:06:40Z

} // namespace

TEST_CASE("parse_allowed_signers skips comments and blank lines and reads CRLF files") {
    keys k;
    std::string text = "# trusted publishers\n\r\n   \n\t# indented comment\r\n" //
                       "alice@x,bob@x " + k.a.line_key + " alice's laptop key\r\n"   // line 5
                       "  \"carol@x,dave@x\" " + k.b.line_key + "\r\n"               // line 6
                       "# last\n" + "erin@x " + k.c.line_key;                        // line 8, no newline
    auto file = parse_ok(text);
    CHECK(file.path == "conf/allowed_signers");
    REQUIRE(file.entries.size() == 3);
    CHECK(file.entries[0].line == 5);
    CHECK(file.entries[0].principals == "alice@x,bob@x");
    CHECK(file.entries[0].key_type == "ssh-ed25519");
    CHECK(file.entries[0].key_blob == *base64_decode(k.a.base64));
    CHECK_FALSE(file.entries[0].cert_authority);
    CHECK_FALSE(file.entries[0].namespaces);
    CHECK_FALSE(file.entries[0].valid_after);
    CHECK_FALSE(file.entries[0].valid_before);
    CHECK(file.entries[1].line == 6);
    CHECK(file.entries[1].principals == "carol@x,dave@x");
    CHECK(file.entries[1].key_blob == k.b.key.blob);
    CHECK(file.entries[2].line == 8);
    CHECK(file.entries[2].key_blob == k.c.key.blob);
    CHECK(parse_ok("# only comments\n\n").entries.empty());
    CHECK(parse_ok("").entries.empty());
}

TEST_CASE("parse_allowed_signers reads the options") {
    zone_guard zone("EST5EDT,M3.2.0,M11.1.0"); // a POSIX zone string, no tzdata needed
    keys k;
    auto one = [&](std::string const& options) {
        auto file = parse_ok("p@x " + options + " " + k.a.line_key + " comment");
        REQUIRE(file.entries.size() == 1);
        CHECK(file.entries[0].key_blob == k.a.key.blob);
        return file.entries[0];
    };
    CHECK(one("cert-authority").cert_authority);
    CHECK(one("Cert-Authority").cert_authority);
    CHECK(one("CERT-AUTHORITY").cert_authority);
    CHECK(one("namespaces=\"a,b\"").namespaces == "a,b");
    CHECK(one("NameSpaces=\"fdl\"").namespaces == "fdl");
    CHECK(one("namespaces=\"x\\\"y,fdl\"").namespaces == "x\"y,fdl");
    CHECK(one("namespaces=\"with space\"").namespaces == "with space");
    auto after = one("valid-after=\"20240101\"");
    CHECK(after.valid_after == local(2024, 1, 1));
    CHECK(after.valid_after == utc(2024, 1, 1, 5)); // EST is UTC-5
    CHECK_FALSE(after.valid_before);
    CHECK(one("valid-before=\"20300101Z\"").valid_before == utc(2030, 1, 1));
    auto both = one("cert-authority,namespaces=\"fdl\",valid-after=\"20240101Z\",valid-before=\"203001011230Z\"");
    CHECK(both.cert_authority);
    CHECK(both.namespaces == "fdl");
    CHECK(both.valid_after == utc(2024, 1, 1));
    CHECK(both.valid_before == utc(2030, 1, 1, 12, 30));
}

/// The one line of `text` that was skipped, or a failed check.
std::string skipped_line(std::string const& text, std::string const& path = "f") {
    auto parsed = parse_allowed_signers(text, path);
    REQUIRE(parsed.has_value());
    REQUIRE(parsed->skipped.size() == 1);
    CHECK(parsed->skipped[0].code == verify_errc::malformed_allowed_signers);
    return parsed->skipped[0].message;
}

TEST_CASE("parse_allowed_signers skips a bad line, as OpenSSH does, and names it path:line: reason") {
    keys k;
    std::string const ed_base64 = k.a.base64;
    auto refuses = [&](std::string const& bad, std::string const& mentions = "") {
        CAPTURE(bad);
        std::string text = "ok@x " + k.b.line_key + "\n# comment\n" + bad + "\nok@x " + k.c.line_key + "\n";
        auto parsed = parse_allowed_signers(text, "conf/allowed_signers");
        REQUIRE(parsed.has_value());
        // The lines around it still count: a typo costs its own line only.
        REQUIRE(parsed->entries.size() == 2);
        CHECK(parsed->entries[0].line == 1);
        CHECK(parsed->entries[1].line == 4);
        REQUIRE(parsed->skipped.size() == 1);
        CHECK(parsed->skipped[0].code == verify_errc::malformed_allowed_signers);
        std::string const& message = parsed->skipped[0].message;
        std::string const prefix = "conf/allowed_signers:3: ";
        CHECK(message.starts_with(prefix));
        CHECK(message.size() > prefix.size()); // a reason follows
        if (!mentions.empty())
            CHECK(message.find(mentions) != std::string::npos);
    };
    refuses("p@x bogus=\"1\" " + k.a.line_key, "bogus");
    refuses("p@x no-touch-requiredX " + k.a.line_key);
    refuses("p@x namespaces=file " + k.a.line_key);
    refuses("p@x namespaces=\"file " + k.a.line_key);
    refuses("\"p@x " + k.a.line_key);
    refuses("p@x namespaces=\"a\",namespaces=\"b\" " + k.a.line_key, "namespaces");
    refuses("p@x valid-after=\"20240101\",valid-after=\"20240102\" " + k.a.line_key, "valid-after");
    refuses("p@x namespaces=\"fdl\", " + k.a.line_key);
    refuses("p@x valid-after=\"2024011\" " + k.a.line_key, "2024011");
    refuses("p@x valid-after=\"20241301\" " + k.a.line_key, "20241301");
    refuses("p@x valid-before=\"20240232\" " + k.a.line_key, "20240232");
    refuses("p@x ssh-rsa " + ed_base64);
    refuses("p@x ecdsa-sha2-nistp256 " + ed_base64);
    refuses("p@x ssh-ed25519 !!!not-base64!!!");
    refuses("p@x ssh-ed25519 " + ed_base64.substr(0, ed_base64.size() - 1)); // a partial group
    refuses("p@x namespaces=\"fdl\"");
    refuses("p@x");
    refuses("p@x ssh-ed25519");
    refuses("p@x ssh-ed25519 ");
}

TEST_CASE("parse_allowed_signers skips a window whose end is not after its start") {
    // sshsigopt_parse: "\"valid-before\" time is before \"valid-after\"" (valid_before <= valid_after).
    keys k;
    for (std::string window : {"valid-after=\"20300101Z\",valid-before=\"20240101Z\"",
                               "valid-after=\"20240101Z\",valid-before=\"20240101Z\""}) {
        CAPTURE(window);
        CHECK(skipped_line("p@x " + window + " " + k.a.line_key + "\n").starts_with("f:1: "));
    }
}

TEST_CASE("parse_allowed_signers skips a key blob that is not a whole key") {
    // The blob names ssh-ed25519 but holds 31 bytes: ssh-keygen -Y verify says "invalid key".
    std::string blob = std::string("\0\0\0\x0bssh-ed25519\0\0\0\x1f", 19) + std::string(31, '\x01');
    CHECK(skipped_line("p@x ssh-ed25519 " + base64_encode(blob) + "\n").starts_with("f:1: "));
}

TEST_CASE("parse_signer_time reads 8, 12 and 14 digits, local or with a UTC suffix") {
    zone_guard zone("EST5EDT,M3.2.0,M11.1.0");
    CHECK(parse_signer_time("20240101Z") == 1'704'067'200); // 2024-01-01T00:00:00Z
    CHECK(parse_signer_time("20240101Z") == utc(2024, 1, 1));
    CHECK(parse_signer_time("202401021304Z") == utc(2024, 1, 2, 13, 4));
    CHECK(parse_signer_time("20240102130405Z") == utc(2024, 1, 2, 13, 4, 5));
    CHECK(parse_signer_time("20240229Z") == utc(2024, 2, 29));
    // Every UTC suffix OpenSSH 9.2 recognises: Z or z, or UTC in any case.
    for (char const* suffix : {"z", "UTC", "utc", "Utc", "uTc"}) {
        CAPTURE(suffix);
        CHECK(parse_signer_time(std::string("20240102130405") + suffix) == utc(2024, 1, 2, 13, 4, 5));
        CHECK(parse_signer_time(std::string("20240102") + suffix) == utc(2024, 1, 2));
    }
    CHECK(parse_signer_time("20240101") == local(2024, 1, 1));
    CHECK(parse_signer_time("20240101") == utc(2024, 1, 1, 5));
    // In summer, a local time is read as standard time (OpenSSH sets tm_isdst to 0): 13:04
    // is 18:04Z, not the 17:04Z of the wall clock in EDT.
    CHECK(parse_signer_time("202407021304") == utc(2024, 7, 2, 18, 4));
    CHECK(parse_signer_time("20240102235959") == local(2024, 1, 2, 23, 59, 59));
}

TEST_CASE("parse_signer_time reads what glibc's strptime reads in OpenSSH: spaces, 31 February, second 61") {
    CHECK(parse_signer_time("2024 101Z") == utc(2024, 1, 1));
    CHECK(parse_signer_time("2024 1 1Z") == utc(2024, 1, 1)); // checked with ssh-keygen -Y verify
    CHECK(parse_signer_time("2024010112 0Z") == utc(2024, 1, 1, 12, 0));
    CHECK(parse_signer_time("20230231Z") == utc(2023, 3, 3)); // normalised, as OpenSSH's
    CHECK(parse_signer_time("20240431Z") == utc(2024, 5, 1));
    CHECK(parse_signer_time("20240101235960Z") == utc(2024, 1, 2, 0, 0, 0));
    CHECK(parse_signer_time("20240101235961Z") == utc(2024, 1, 2, 0, 0, 1));
    CHECK(parse_signer_time("99991231235959Z").has_value());
    CHECK(parse_signer_time("19700101000001Z") == 1);
}

TEST_CASE("parse_signer_time refuses what OpenSSH 9.2 refuses") {
    for (char const* text : {"", "Z", "UTC", "2024011", "2024011Z", "202401011", "2024010112", "2024010112345",
                             "202401011234567", "20241301", "20240001", "20240100", "20240132", "202401012400",
                             "202401011260", "20240101120062", "2024-1-01", "2024010a", "20240101ZZ", "20240101ZUTC",
                             "20240101 UTC", " 20240101", "20240101 ", "+2024010", "20240101T1200",
                             "19700101Z", "19700101000000Z"}) {
        CAPTURE(text);
        CHECK_FALSE(parse_signer_time(text).has_value());
    }
}

TEST_CASE("parse_signer_time refuses a time before the epoch") {
    // misc.c parse_absolute_time: timegm/mktime < 0 is SSH_ERR_INVALID_FORMAT.
    CHECK_FALSE(parse_signer_time("19600101Z").has_value());
    CHECK_FALSE(parse_signer_time("19691231235959Z").has_value());
}

TEST_CASE("check_signer accepts a listed key and says why it refuses others") {
    keys k;
    auto file = parse_ok("alice@x,bob@x " + k.a.line_key + "\n"                                       // 1
                         "*@ops.x,!mallory@ops.x namespaces=\"fdl,git\" " + k.b.line_key + "\n"         // 2
                         "carol@x valid-after=\"20240101Z\",valid-before=\"20250101Z\" " + k.c.line_key); // 3
    auto ok = check_signer(file, k.a.key, "bob@x", "fdl", mid_2025);
    REQUIRE(ok.has_value());
    CHECK((*ok)->line == 1);
    CHECK(kind(check_signer(file, k.other.key, "alice@x", "fdl", mid_2025)) == "untrusted_key");
    CHECK(kind(check_signer(file, k.a.key, "eve@x", "fdl", mid_2025)) == "principal_not_allowed");
    CHECK(kind(check_signer(file, k.a.key, "carol@x", "fdl", mid_2025)) == "principal_not_allowed");
    auto ops = check_signer(file, k.b.key, "dave@ops.x", "git", mid_2025);
    REQUIRE(ops.has_value());
    CHECK((*ops)->line == 2);
    CHECK(kind(check_signer(file, k.b.key, "dave@ops.x", "other", mid_2025)) == "namespace_not_allowed");
    CHECK(kind(check_signer(file, k.b.key, "mallory@ops.x", "fdl", mid_2025)) == "principal_not_allowed");
    CHECK(kind(check_signer(file, k.b.key, "dave@ops.y", "fdl", mid_2025)) == "principal_not_allowed");
}

TEST_CASE("check_signer honours valid-after and valid-before, both inclusive") {
    keys k;
    auto file = parse_ok("carol@x valid-after=\"20240101Z\",valid-before=\"20250101Z\" " + k.c.line_key + "\n"
                         "dan@x valid-before=\"20240101Z\" " + k.a.line_key + "\n");
    std::int64_t const start = utc(2024, 1, 1), end = utc(2025, 1, 1);
    CHECK(kind(check_signer(file, k.c.key, "carol@x", "fdl", start - 1)) == "outside_validity");
    CHECK(kind(check_signer(file, k.c.key, "carol@x", "fdl", start)) == "accepted");
    CHECK(kind(check_signer(file, k.c.key, "carol@x", "fdl", start + 86'400)) == "accepted");
    CHECK(kind(check_signer(file, k.c.key, "carol@x", "fdl", end)) == "accepted");
    CHECK(kind(check_signer(file, k.c.key, "carol@x", "fdl", end + 1)) == "outside_validity");
    CHECK(kind(check_signer(file, k.a.key, "dan@x", "fdl", start)) == "accepted");
    CHECK(kind(check_signer(file, k.a.key, "dan@x", "fdl", start + 1)) == "outside_validity");
}

TEST_CASE("a cert-authority line never accepts a plain key") {
    keys k;
    auto ca_only = parse_ok("* cert-authority " + k.a.line_key + "\n");
    CHECK(kind(check_signer(ca_only, k.a.key, "alice@x", "fdl", mid_2025)) == "untrusted_key");
    CHECK(kind(find_signers(ca_only, k.a.key, std::string_view("fdl"), mid_2025)) == "untrusted_key");
    CHECK(kind(find_signers(ca_only, k.a.key, std::nullopt, mid_2025)) == "untrusted_key");
    auto mixed = parse_ok("* cert-authority " + k.a.line_key + "\nalice@x " + k.a.line_key + "\n");
    auto ok = check_signer(mixed, k.a.key, "alice@x", "fdl", mid_2025);
    REQUIRE(ok.has_value());
    CHECK((*ok)->line == 2);
}

TEST_CASE("check_signer reports the most specific reason over all lines") {
    keys k;
    auto file = parse_ok("alice@x " + k.a.line_key + "\n"                                     // principal fails
                         "bob@x namespaces=\"git\" " + k.a.line_key + "\n"                     // namespace fails
                         "bob@x valid-after=\"20300101Z\" " + k.b.line_key + "\n");            // another key
    CHECK(kind(check_signer(file, k.a.key, "bob@x", "fdl", mid_2025)) == "namespace_not_allowed");
    CHECK(kind(check_signer(file, k.b.key, "bob@x", "fdl", mid_2025)) == "outside_validity");
    CHECK(kind(check_signer(file, k.c.key, "bob@x", "fdl", mid_2025)) == "untrusted_key");
}

TEST_CASE("find_signers returns every accepting line in file order") {
    keys k;
    auto file = parse_ok("alice@x " + k.a.line_key + "\n"                                    // 1
                         "bob@x " + k.b.line_key + "\n"                                      // 2
                         "carol@x namespaces=\"fdl\" " + k.a.line_key + "\n"                 // 3
                         "dave@x namespaces=\"git\" " + k.a.line_key + "\n"                  // 4
                         "erin@x valid-before=\"20240101Z\" " + k.a.line_key + "\n"          // 5
                         "* cert-authority " + k.a.line_key + "\n"                           // 6
                         "frank@x,!bad@x " + k.a.line_key + "\n");                           // 7
    auto lines = [](auto const& found) {
        std::vector<std::size_t> out;
        for (auto const* e : found)
            out.push_back(e->line);
        return out;
    };
    auto fdl = find_signers(file, k.a.key, std::string_view("fdl"), mid_2025);
    REQUIRE(fdl.has_value());
    CHECK(lines(*fdl) == std::vector<std::size_t>{1, 3, 7});
    auto any = find_signers(file, k.a.key, std::nullopt, mid_2025);
    REQUIRE(any.has_value());
    CHECK(lines(*any) == std::vector<std::size_t>{1, 3, 4, 7});
    auto early = find_signers(file, k.a.key, std::nullopt, utc(2023, 6, 1));
    REQUIRE(early.has_value());
    CHECK(lines(*early) == std::vector<std::size_t>{1, 3, 4, 5, 7});
    auto b = find_signers(file, k.b.key, std::string_view("fdl"), mid_2025);
    REQUIRE(b.has_value());
    CHECK(lines(*b) == std::vector<std::size_t>{2});
    CHECK(kind(find_signers(file, k.c.key, std::nullopt, mid_2025)) == "untrusted_key");
    auto c_file = parse_ok("carol@x namespaces=\"git\" " + k.c.line_key + "\ncarol@x valid-after=\"20300101Z\" " +
                           k.c.line_key + "\n");
    CHECK(kind(find_signers(c_file, k.c.key, std::string_view("fdl"), mid_2025)) == "outside_validity");
}

TEST_CASE("find_principals answers as ssh-keygen -Y find-principals: the first line, its field as written") {
    keys k;
    auto file = parse_ok("old@x valid-before=\"20240101Z\" " + k.a.line_key + "\n"
                         "!bob@x,,carol@x namespaces=\"git\" " + k.a.line_key + "\n"
                         "dave@x " + k.a.line_key + "\n");
    CHECK(find_principals(file, k.a.key, nullptr, utc(2023, 6, 1)).value() == "old@x");
    // namespaces= is passed over unless asked for; '!' and the empty item are kept as written.
    CHECK(find_principals(file, k.a.key, nullptr, mid_2025).value() == "!bob@x,,carol@x");
    CHECK(find_principals(file, k.a.key, nullptr, mid_2025, std::string_view("fdl")).value() == "dave@x");
    CHECK(kind(find_principals(file, k.b.key, nullptr, mid_2025)) == "principal_not_allowed");
}

TEST_CASE("find_principals for a certificate: its principals each line pattern matches, in pattern order") {
    keys k;
    ssh_certificate cert;
    cert.key = k.b.key;
    cert.type = 1;
    cert.key_id = "id";
    cert.principals = {"alice@x", "bob@x", "carol@x"};
    cert.valid_before = UINT64_MAX;
    cert.ca = k.a.key;
    auto file = parse_ok("erin@x cert-authority " + k.a.line_key + "\n"           // matches none: next line
                         "carol@x,!bob@x,*@x,,alice@x cert-authority " /* "!bob@x" is a literal */ + k.a.line_key + "\n");
    CHECK(find_principals(file, cert.key, &cert, mid_2025).value() ==
          "carol@x,alice@x,bob@x,carol@x");
    CHECK(find_principals(file, cert.key, &cert, mid_2025, std::string_view("fdl")).value() ==
          "carol@x,alice@x,bob@x,carol@x");
    cert.type = 2; // a host certificate names no signer
    CHECK(kind(find_principals(file, cert.key, &cert, mid_2025)) == "principal_not_allowed");
    cert.type = 1;
    cert.valid_before = static_cast<std::uint64_t>(utc(2024, 1, 1));
    CHECK(kind(find_principals(file, cert.key, &cert, mid_2025)) == "principal_not_allowed");
    // A plain key line with the CA's key is not a cert-authority line.
    auto plain = parse_ok("*@x " + k.a.line_key + "\n");
    CHECK(kind(find_principals(plain, cert.key, &cert, mid_2025)) == "principal_not_allowed");
}

// Found by tests/fuzz/allowed_signers_fuzz.cpp (AddressSanitizer: heap-use-after-free):
// find_signers took the certificate's first principal through a conditional whose other
// arm was "", so the view pointed into a temporary std::string destroyed at once, and the
// check that explains the refusal read freed memory.
TEST_CASE("find_signers explains a certificate no line accepts without reading freed memory") {
    keys k;
    auto file = parse_ok("bob@x cert-authority " + k.a.line_key + "\n");
    ssh_certificate cert;
    cert.key = k.b.key;
    cert.type = 1;
    cert.key_id = "id";
    cert.principals = {"a-principal-longer-than-a-short-string@example.org"}; // on the heap, not inline
    cert.valid_before = UINT64_MAX;
    cert.ca = k.a.key;
    auto found = find_signers(file, cert.key, std::string_view("fdl"), mid_2025, &cert);
    REQUIRE(!found);
    CHECK(kind(found) == "principal_not_allowed");
    CHECK(found.error().message.find("the key is listed, but not for this principal") != std::string::npos);
}

TEST_CASE("a security key's flags: user presence unless no-touch-required, verification when verify-required") {
    keys k;
    auto file = parse_ok("plain@x " + k.a.line_key + "\n" + "relaxed@x no-touch-required " + k.a.line_key + "\n" +
                         "strict@x verify-required " + k.a.line_key + "\n" + "pin@x NO-TOUCH-REQUIRED,Verify-Required " +
                         k.a.line_key + "\n");
    REQUIRE(file.skipped.empty());
    CHECK(file.entries[1].no_touch_required);
    CHECK(file.entries[2].verify_required);
    CHECK((file.entries[3].no_touch_required && file.entries[3].verify_required));
    struct expectation {
        char const* principal;
        int flags;
        bool accepted;
    };
    for (auto const& e : {expectation{"plain@x", 0x01, true}, expectation{"plain@x", 0x00, false},
                          expectation{"plain@x", 0x04, false}, expectation{"plain@x", 0x05, true},
                          expectation{"relaxed@x", 0x00, true}, expectation{"relaxed@x", 0x04, true},
                          expectation{"strict@x", 0x01, false}, expectation{"strict@x", 0x04, false},
                          expectation{"strict@x", 0x05, true}, expectation{"pin@x", 0x04, true},
                          expectation{"pin@x", 0x01, false}}) {
        CAPTURE(e.principal);
        CAPTURE(e.flags);
        auto r = check_signer(file, k.a.key, e.principal, "fdl", mid_2025, nullptr, static_cast<std::uint8_t>(e.flags));
        CHECK(kind(r) == (e.accepted ? "accepted" : "security_key_flags"));
    }
    // A signature by another kind of key has no flags: only verify-required lines refuse it.
    CHECK(kind(check_signer(file, k.a.key, "plain@x", "fdl", mid_2025)) == "accepted");
    CHECK(kind(check_signer(file, k.a.key, "relaxed@x", "fdl", mid_2025)) == "accepted");
    CHECK(kind(check_signer(file, k.a.key, "strict@x", "fdl", mid_2025)) == "security_key_flags");
    auto found = find_signers(file, k.a.key, "fdl", mid_2025, nullptr, std::uint8_t{0x00});
    REQUIRE(found.has_value());
    REQUIRE(found->size() == 1);
    CHECK(found->front()->principals == "relaxed@x");
}

TEST_CASE("principal_items splits at commas and stops at the first empty item") {
    using items = std::vector<std::string_view>;
    CHECK(principal_items("a@x") == items{"a@x"});
    CHECK(principal_items("a@x,!b@x,*") == items{"a@x", "!b@x", "*"});
    CHECK(principal_items("a@x,,b@x") == items{"a@x"});
    CHECK(principal_items(",a@x") == items{});
    CHECK(principal_items("a@x,") == items{"a@x"});
    CHECK(principal_items("") == items{});
}
