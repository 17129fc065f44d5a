#include "verify/signature_policy.hpp"

#include "verify/errors.hpp"
#include "verify/patterns.hpp"
#include "verify/sshsig.hpp"

#include <set>

namespace mirror::verify {

std::vector<std::string> certificate_principals(allowed_signer const& line, ssh_certificate const& cert,
                                                std::int64_t now) {
    std::vector<std::string> out;
    for (auto const& name : cert.principals)
        if (match_pattern_list(name, line.principals) == list_match::positive &&
            check_certificate_authority(cert, name, now))
            out.push_back(name);
    return out;
}

namespace {

/// ": key SHA256:…" when a signature that failed still names its key (a tampered record, a
/// wrong namespace), so that an alert or a status can say which key; "" when it does not.
std::string named_key(std::string_view armored) {
    auto blob = dearmor(armored);
    if (!blob)
        return {};
    auto signer = parse_sshsig_signer(*blob);
    return signer ? ": key " + fingerprint(signer->key) : std::string();
}

} // namespace

result<std::optional<signer_info>> check_version_signature(trust_settings const& trust, std::string_view record,
                                                           std::optional<std::string_view> armored,
                                                           std::int64_t now) {
    if (trust.policy == signature_policy::off)
        return std::optional<signer_info>();
    if (!armored) {
        if (trust.policy == signature_policy::if_present)
            return std::optional<signer_info>();
        return make_error(verify_errc::missing_signature, "version.json.sig: missing, and signatures are required");
    }
    auto signature = verify_sshsig(*armored, record, trust.ns);
    if (!signature)
        return with_context(signature.error(), "version.json.sig" + named_key(*armored));
    std::optional<std::uint8_t> flags;
    if (signature->security_key)
        flags = signature->security_key->flags;
    auto lines = find_signers(trust.signers, signature->key, trust.ns, now,
                              signature->certificate ? &*signature->certificate : nullptr, flags);
    if (!lines)
        return with_context(lines.error(), "version.json.sig: key " + fingerprint(signature->key));
    auto const& line = *lines->front();
    signer_info signer{line.principals, fingerprint(signature->key), signature->key.type, line.line, {}};
    if (signature->certificate) {
        // The principals that signed are the certificate's ones the line accepts.
        signer.principals.clear();
        for (auto const& name : certificate_principals(line, *signature->certificate, now))
            signer.principals += (signer.principals.empty() ? "" : ",") + name;
        signer.ca_fingerprint = fingerprint(signature->certificate->ca);
        signer.key_type += "-cert";
    }
    return std::optional<signer_info>(std::move(signer));
}

key_differences compare_announced_keys(std::vector<std::string> const& announced, allowed_signers const& trusted) {
    key_differences out;
    std::set<std::string> announced_blobs;
    for (auto const& text : announced) {
        auto parsed = parse_allowed_signers(text, "fdl.json signers");
        if (!parsed || parsed->entries.size() != 1) {
            out.unreadable.push_back(parsed ? "fdl.json signers: '" + text.substr(0, 60) + "' is not one key line"
                                            : parsed.error().message);
            continue;
        }
        auto const& entry = parsed->entries.front();
        announced_blobs.insert(entry.key_blob);
        bool is_trusted = false;
        for (auto const& t : trusted.entries)
            is_trusted = is_trusted || (t.key_blob == entry.key_blob && !t.cert_authority);
        if (!is_trusted)
            out.announced_not_trusted.push_back(fingerprint({entry.key_type, entry.key_blob}) + " (" +
                                                entry.principals + ")");
    }
    for (auto const& t : trusted.entries)
        if (!t.cert_authority && !announced_blobs.contains(t.key_blob))
            out.trusted_not_announced.push_back(fingerprint({t.key_type, t.key_blob}) + " (" + t.principals + ")");
    return out;
}

} // namespace mirror::verify
