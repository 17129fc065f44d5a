// libFuzzer target: allowed_signers files (verify/allowed_signers.hpp) as an operator
// writes them, and the same lines as an origin announces them in fdl.json's `signers`
// (compare_announced_keys), with the pattern lists and times they hold. Besides the
// sanitizers: a refusal names the file and line; an accepted file's keys are whole; and
// check_signer and find_signers accept a key only through a line that holds it, for the
// principal, the namespace and the time asked, as `ssh-keygen -Y verify` would.

#include "verify/allowed_signers.hpp"
#include "verify/errors.hpp"
#include "verify/patterns.hpp"
#include "verify/signature_policy.hpp"
#include "verify/ssh_wire.hpp"
#include "tests/fuzz/support/check.hpp"

using namespace mirror;
using namespace mirror::verify;
using mirror::fuzz::check;

namespace {

constexpr std::int64_t now = 1'800'000'000; // 2027-01-15, inside the seeds' windows
constexpr std::string_view principals[] = {"alice@example.org", "bob", ""};
constexpr std::string_view namespaces[] = {"fdl", "file"};

/// What a line that accepted must satisfy (the rules of ssh-keygen(1), ALLOWED SIGNERS).
void check_accepting(allowed_signer const& line, ssh_public_key const& key, ssh_certificate const* cert,
                     std::optional<std::string_view> principal, std::optional<std::string_view> ns) {
    if (cert == nullptr)
        check(!line.cert_authority && line.key_blob == key.blob, "a line accepted a key it does not hold");
    else
        check(line.cert_authority && line.key_blob == cert->ca.blob, "a line accepted a certificate of another CA");
    if (principal)
        check(match_pattern_list(*principal, line.principals) == list_match::positive,
              "a line accepted a principal it does not list", *principal);
    if (ns && line.namespaces)
        check(match_pattern_list(*ns, *line.namespaces) == list_match::positive,
              "a line accepted a namespace it does not list", *ns);
    check((!line.valid_after || now >= *line.valid_after) && (!line.valid_before || now <= *line.valid_before),
          "a line accepted outside its validity");
}

void check_trust(allowed_signers const& signers, allowed_signer const& entry) {
    ssh_public_key key{entry.key_type, entry.key_blob};
    // A user certificate of the line's key as CA (check_signer reads it; its signature is
    // checked elsewhere, by verify_sshsig).
    ssh_certificate cert;
    cert.key = {"ssh-ed25519", "certified"};
    cert.type = 1;
    cert.principals = {"alice@example.org", "carol"};
    cert.valid_before = UINT64_MAX;
    cert.ca = key;
    for (ssh_certificate const* c : {static_cast<ssh_certificate const*>(nullptr), static_cast<ssh_certificate const*>(&cert)})
        for (auto ns : namespaces) {
            for (auto principal : principals) {
                auto accepted = check_signer(signers, key, principal, ns, now, c);
                if (accepted)
                    check_accepting(**accepted, key, c, principal, ns);
                else
                    check(accepted.error().code.category() == verify_category(), "check_signer: not a verify_errc");
            }
            auto found = find_signers(signers, key, ns, now, c);
            if (found)
                for (auto const* line : *found)
                    check_accepting(*line, key, c, std::nullopt, ns);
        }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(unsigned char const* data, std::size_t size) {
    auto text = mirror::fuzz::as_text(data, size);
    auto signers = parse_allowed_signers(text, "allowed_signers");
    check(signers.has_value(), "a whole file refused: bad lines are skipped, not fatal");
    if (signers) {
        for (auto const& skipped : signers->skipped) {
            check(skipped.code == verify_errc::malformed_allowed_signers, "a line skipped with another code");
            check(skipped.message.starts_with("allowed_signers:"), "a skipped line that is not named",
                  skipped.message);
        }
        for (auto const& entry : signers->entries) {
            check(!entry.principals.empty(), "a line without principals accepted");
            check(!(entry.valid_after && entry.valid_before) || *entry.valid_before > *entry.valid_after,
                  "a line whose window is empty accepted");
            wire_reader in(entry.key_blob);
            auto inner = in.cstring();
            check(inner && canonical_key_type(*inner) == canonical_key_type(entry.key_type, false),
                  "a line's blob is of another type");
        }
        for (std::size_t i = 0; i < signers->entries.size() && i < 4; ++i)
            check_trust(*signers, signers->entries[i]);
    }
    // An origin's fdl.json announces keys as lines: one per entry, never trusted.
    std::vector<std::string> announced;
    for (std::size_t at = 0; at < text.size() && announced.size() < 8;) {
        auto end = text.find('\n', at);
        announced.emplace_back(text.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at));
        at = end == std::string_view::npos ? text.size() : end + 1;
    }
    (void)compare_announced_keys(announced, signers ? *signers : allowed_signers{});
    if (auto when = parse_signer_time(text.substr(0, 16)))
        check(*when > 0, "a time at or before the epoch accepted");
    return 0;
}
