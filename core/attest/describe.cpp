#include "core/attest/describe.hpp"

#include "core/attest/envelope.hpp"
#include "core/attest/errors.hpp"
#include "core/attest/mirror_state.hpp"
#include "core/sync/limits.hpp"
#include "verify/sshsig.hpp"

namespace mirror::attest {

namespace {

std::string policy_name(verify::signature_policy policy) {
    switch (policy) {
    case verify::signature_policy::required: return "required";
    case verify::signature_policy::if_present: return "if-present";
    case verify::signature_policy::off: return "off";
    }
    return "off";
}

/// The fingerprint of the trusted key whose signature of version `id` the policy
/// accepts; "" when there is none (or the policy does not check signatures).
awaitable<std::string> signer_of(store::store& mirror, statement_inputs const& inputs, std::string const& id) {
    if (inputs.signers)
        if (auto found = inputs.signers->find(id); found != inputs.signers->end())
            co_return found->second.fingerprint;
    if (inputs.trust == nullptr || inputs.trust->policy == verify::signature_policy::off)
        co_return std::string();
    std::string const folder = "versions/" + id + "/";
    auto sig = co_await store::read_if_present(mirror, folder + "version.json.sig", verify::max_signature_bytes);
    if (!sig || !*sig)
        co_return std::string();
    auto record = co_await store::read_all(mirror, folder + "version.json", sync::limits::version_json);
    if (!record)
        co_return std::string();
    auto checked = verify::check_version_signature(*inputs.trust, *record, **sig, inputs.now);
    co_return checked && *checked ? (*checked)->fingerprint : std::string();
}

} // namespace

awaitable<result<mirror_statement>> describe_mirror(store::store& mirror, statement_inputs const& inputs,
                                                    remembered_versions& memory) {
    std::map<std::string, std::string, std::less<>> known;
    for (auto const& [id, version] : memory)
        known.emplace(id, version.sha256);
    auto state = co_await read_mirror_state(mirror, inputs.concurrency, &known);
    if (!state)
        co_return state.error();
    for (auto const& [name, id] : state->refs) {
        auto remembered = memory.find(id);
        auto now = state->versions.find(id);
        if (remembered != memory.end() && now != state->versions.end() && remembered->second.sha256 != now->second)
            co_return make_error(attest_errc::mismatch,
                                 name + ": versions/" + id + "/version.json in the mirror has sha256 " + now->second +
                                     ", attested before as " + remembered->second.sha256 +
                                     ": the mirror changed after it was attested; not attested again");
    }
    mirror_statement s;
    s.fdl_json_sha256 = state->fdl_json_sha256;
    s.repository_id = state->repository_id.value_or("");
    for (auto const& [name, id] : state->refs) {
        auto digest = state->versions.find(id);
        if (digest == state->versions.end())
            co_return make_error(attest_errc::mismatch,
                                 name + ": names " + id + ", which the mirror does not publish; not attested");
        s.refs.push_back({name, id, digest->second});
    }
    remembered_versions next;
    for (auto const& [id, sha256] : state->versions) {
        auto remembered = memory.find(id);
        std::string signer;
        if (remembered != memory.end())
            signer = remembered->second.signer;
        else
            signer = co_await signer_of(mirror, inputs, id); // (not inside ?:, GCC 12)
        s.versions.push_back({id, sha256, signer});
        next.emplace(id, remembered_version{sha256, std::move(signer)});
    }
    memory = std::move(next);
    s.origin = location_without_secrets(inputs.origin);
    s.mirror = location_without_secrets(inputs.mirror);
    s.attested_at = inputs.now;
    s.verified_at = inputs.verified_at;
    s.expires = inputs.verified_at + inputs.validity.count();
    if (inputs.trust)
        s.signature_policy = {policy_name(inputs.trust->policy), inputs.trust->ns, inputs.allowed_signers_sha256};
    s.tool_version = inputs.tool_version;
    s.instance = inputs.instance;
    s.fencing_token = inputs.fencing_token;
    co_return s;
}

result<mirror_statement> own_statement(std::string_view text, verify::signing_key const& key, std::string_view ns) {
    // Only this key is trusted here, at any time: what it signed, this daemon (or one with
    // its key) stated.
    verify::allowed_signers own;
    own.path = "the mirror's own key";
    own.entries.push_back({1, "*", false, std::nullopt, std::nullopt, std::nullopt, false, false,
                           key.public_key().type, key.public_key().blob});
    auto opened = open_envelope(text, own, ns, 0);
    if (!opened)
        return opened.error();
    return std::move(opened->statement);
}

awaitable<remembered_versions> remembered_from_mirror(store::store& mirror, verify::signing_key const& key,
                                                      std::string ns, std::size_t max_bytes) {
    remembered_versions out;
    auto text = co_await store::read_if_present(mirror, std::string(attestation_key), max_bytes);
    if (!text || !*text)
        co_return out;
    auto statement = own_statement(**text, key, ns);
    if (!statement)
        co_return out;
    for (auto const& version : statement->versions)
        out.emplace(version.id, remembered_version{version.version_json_sha256, version.signer});
    co_return out;
}

} // namespace mirror::attest
