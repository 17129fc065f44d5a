#include "core/attest/envelope.hpp"

#include "core/attest/errors.hpp"
#include "core/fdl/json_fields.hpp"
#include "verify/errors.hpp"
#include "verify/ssh_wire.hpp"
#include "verify/sshsig.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

namespace mirror::attest {

namespace json = boost::json;

std::string pae(std::string_view type, std::string_view body) {
    std::string out = "DSSEv1 " + std::to_string(type.size()) + " ";
    out += type;
    out += " " + std::to_string(body.size()) + " ";
    out += body;
    return out;
}

std::string render_envelope(envelope const& e) {
    json::array signatures;
    for (auto const& s : e.signatures)
        signatures.push_back(json::object{{"keyid", s.keyid}, {"sig", verify::base64_encode(s.sig)}});
    json::object out{{"payloadType", e.payload_type},
                     {"payload", verify::base64_encode(e.payload)},
                     {"signatures", std::move(signatures)}};
    return json::serialize(out) + "\n";
}

namespace {

constexpr std::string_view where = "attestation envelope";

/// The signatures read of one envelope: a mirror signs with one key, two while it rotates
/// them. Each costs a verification, so a planted envelope of 200,000 signatures naming a
/// trusted key would cost its consumer many seconds of CPU (issue 45); more is refused.
constexpr std::size_t max_envelope_signatures = 16;

error malformed(std::string const& what) { return make_error(attest_errc::malformed, std::string(where) + ": " + what); }

} // namespace

result<envelope> parse_envelope(std::string_view text) {
    if (text.size() > max_attestation_bytes)
        return malformed("larger than " + std::to_string(max_attestation_bytes) + " bytes");
    // The envelope is its payload's base64 and a few signatures: a tree much larger than
    // its text is not one.
    auto value = fdl::parse_json(text, where, text.size() + (std::size_t{1} << 20));
    if (!value)
        return make_error(attest_errc::malformed, value.error().message);
    auto top = fdl::object_fields::top(*value, where);
    if (!top)
        return make_error(attest_errc::malformed, top.error().message);
    envelope out;
    std::string payload;
    fdl::field_reader read(*top);
    read.string("payloadType", out.payload_type).string("payload", payload);
    if (auto ok = read.done(); !ok)
        return make_error(attest_errc::malformed, ok.error().message);
    auto decoded = verify::base64_decode(payload);
    if (!decoded)
        return malformed("payload: not base64");
    out.payload = std::move(*decoded);
    auto signatures = top->optional_array("signatures");
    if (!signatures)
        return make_error(attest_errc::malformed, signatures.error().message);
    if ((*signatures)->empty())
        return malformed("signatures: none");
    if ((*signatures)->size() > max_envelope_signatures)
        return malformed("signatures: " + std::to_string((*signatures)->size()) + ", more than the " +
                         std::to_string(max_envelope_signatures) + " an envelope may carry");
    for (std::size_t i = 0; i < (*signatures)->size(); ++i) {
        auto const& item = (**signatures)[i];
        std::string const at = "signatures[" + std::to_string(i) + "]";
        if (!item.is_object())
            return malformed(at + ": not an object");
        fdl::object_fields fields(item.as_object(), where, at);
        envelope_signature signature;
        std::optional<std::string> keyid;
        std::string sig;
        fdl::field_reader read_signature(fields);
        read_signature.optional_string("keyid", keyid).string("sig", sig);
        if (auto ok = read_signature.done(); !ok)
            return make_error(attest_errc::malformed, ok.error().message);
        auto blob = verify::base64_decode(sig);
        if (!blob || blob->size() > verify::max_signature_bytes)
            return malformed(at + ".sig: not base64 of at most " + std::to_string(verify::max_signature_bytes) +
                             " bytes");
        out.signatures.push_back({keyid.value_or(""), std::move(*blob)});
    }
    return out;
}

std::string armor_sshsig(std::string_view blob) {
    std::string const base64 = verify::base64_encode(blob);
    std::string out = "-----BEGIN SSH SIGNATURE-----\n";
    for (std::size_t at = 0; at < base64.size(); at += 70)
        out += base64.substr(at, 70) + "\n";
    out += "-----END SSH SIGNATURE-----\n";
    return out;
}

result<std::string> sign_statement(mirror_statement const& statement, verify::signing_key const& key,
                                   std::string_view ns) {
    std::string const body = render_statement(statement);
    auto armored = key.sign(pae(payload_type, body), ns);
    if (!armored)
        return armored.error();
    auto blob = verify::dearmor(*armored);
    if (!blob)
        return blob.error();
    return render_envelope({std::string(payload_type), body, {{key.fingerprint(), std::move(*blob)}}});
}

namespace {

/// A failure of trust rather than of the signature: the key verified, the file does not
/// accept it (now, for this namespace, for any principal).
bool is_trust_failure(error const& e) {
    using verify::verify_errc;
    return e.code == verify_errc::untrusted_key || e.code == verify_errc::principal_not_allowed ||
           e.code == verify_errc::namespace_not_allowed || e.code == verify_errc::outside_validity ||
           e.code == verify_errc::security_key_flags;
}

} // namespace

result<opened_envelope> open_envelope(std::string_view text, verify::allowed_signers const& trusted,
                                      std::string_view ns, std::int64_t now) {
    auto parsed = parse_envelope(text);
    if (!parsed)
        return parsed.error();
    if (parsed->payload_type != payload_type)
        return malformed("payloadType: '" + parsed->payload_type + "', not " + std::string(payload_type));
    std::string const signed_bytes = pae(parsed->payload_type, parsed->payload);
    verify::trust_settings trust{verify::signature_policy::required, trusted, std::string(ns)};
    std::optional<error> untrusted, bad;
    std::optional<verify::signer_info> signer;
    for (auto const& signature : parsed->signatures) {
        auto checked = verify::check_version_signature(trust, signed_bytes, armor_sshsig(signature.sig), now);
        if (checked && *checked) {
            signer = std::move(**checked);
            break;
        }
        error why = checked ? make_error(verify::verify_errc::missing_signature, "no signature") : checked.error();
        // The verifier names the file it checks as a version's: here it is the envelope's.
        if (why.message.starts_with("version.json.sig"))
            why.message = "signature" + why.message.substr(16);
        (is_trust_failure(why) ? untrusted : bad).emplace(std::move(why));
    }
    if (!signer) {
        if (untrusted)
            return make_error(attest_errc::untrusted_key, std::string(where) + ": " + untrusted->message + " (" +
                                                              verify::kind_name(static_cast<verify::verify_errc>(
                                                                  untrusted->code.value())) +
                                                              ")");
        return make_error(attest_errc::bad_signature, std::string(where) + ": " + bad->message);
    }
    auto statement = parse_statement(parsed->payload);
    if (!statement)
        return statement.error();
    return opened_envelope{std::move(*statement), std::move(*signer)};
}

} // namespace mirror::attest
