#include "core/attest/check.hpp"

#include "core/attest/envelope.hpp"
#include "core/attest/errors.hpp"
#include "core/attest/mirror_state.hpp"
#include "verify/sha256.hpp"
#include "core/io/errors.hpp"

namespace mirror::attest {

namespace {

error mismatch(std::string const& what) { return make_error(attest_errc::mismatch, "attestation: " + what); }

/// The object's name in messages: the store's location, then the key.
std::string named(store::store const& mirror, std::string const& key) {
    std::string out = mirror.describe();
    return out + (out.ends_with('/') ? "" : "/") + key;
}

/// The refs: each the mirror holds is attested, at the same version, with the same
/// version.json; each attested is still there.
void compare_refs(mirror_statement const& statement, mirror_state const& state, check_report& report) {
    std::map<std::string, attested_ref const*, std::less<>> attested;
    for (auto const& ref : statement.refs)
        attested.emplace(ref.name, &ref);
    for (auto const& [name, id] : state.refs) {
        ++report.refs_checked;
        auto found = attested.find(name);
        if (found == attested.end()) {
            report.problems.push_back(mismatch(name + ": in the mirror (at " + id + "), not in the attestation"));
            continue;
        }
        auto const& ref = *found->second;
        attested.erase(found);
        if (ref.version != id) {
            report.problems.push_back(mismatch(name + ": names " + id + " in the mirror, " + ref.version +
                                               " in the attestation"));
            continue;
        }
        auto held = state.versions.find(id);
        if (held == state.versions.end())
            report.problems.push_back(mismatch(name + ": names " + id + ", which the mirror does not publish"));
        else if (held->second != ref.version_json_sha256)
            report.problems.push_back(mismatch(name + ": versions/" + id + "/version.json has sha256 " + held->second +
                                               ", the attestation " + ref.version_json_sha256));
    }
    for (auto const& [name, ref] : attested)
        report.problems.push_back(mismatch(name + ": attested at " + ref->version + ", absent from the mirror"));
    for (auto const& refused : state.refused_refs)
        report.problems.push_back(mismatch(refused.message));
    // Readers over HTTP go by refs.json: it must say what refs/ says, wherever the check
    // can see both (a check over HTTP reads the refs through refs.json itself).
    for (auto const& problem : state.refs_json_problems)
        report.problems.push_back(mismatch(problem));
}

/// The versions: each published one attested with the same version.json, each attested one there.
void compare_versions(mirror_statement const& statement, mirror_state const& state, check_report& report) {
    std::map<std::string, std::string const*, std::less<>> attested;
    for (auto const& version : statement.versions)
        attested.emplace(version.id, &version.version_json_sha256);
    for (auto const& [id, sha256] : state.versions) {
        ++report.versions_checked;
        auto found = attested.find(id);
        if (found == attested.end()) {
            report.problems.push_back(mismatch("versions/" + id + ": published in the mirror, not in the attestation"));
            continue;
        }
        if (*found->second != sha256)
            report.problems.push_back(mismatch("versions/" + id + "/version.json: sha256 " + sha256 +
                                               " in the mirror, " + *found->second + " in the attestation"));
        attested.erase(found);
    }
    for (auto const& [id, sha256] : attested)
        report.problems.push_back(mismatch("versions/" + id + ": attested, absent from the mirror"));
}

/// The statement's times against `now`: not expired, not older than max_age, not from
/// further ahead than the clocks may disagree.
void check_times(mirror_statement const& s, check_settings const& settings, check_report& report) {
    auto const now = settings.now;
    if (s.expires <= now)
        report.problems.push_back(make_error(
            attest_errc::expired, "attestation: expired at " + utc_time_text(s.expires) + " (the mirror was last "
                                  "verified against its origin at " + utc_time_text(s.verified_at) +
                                  "): nothing has kept it verified since"));
    if (s.attested_at > now + settings.clock_skew.count())
        report.problems.push_back(make_error(attest_errc::stale, "attestation: made at " +
                                                                     utc_time_text(s.attested_at) +
                                                                     ", in the future of this clock by more than " +
                                                                     std::to_string(settings.clock_skew.count()) + " s"));
    else if (settings.max_age && now - s.attested_at > settings.max_age->count())
        report.problems.push_back(make_error(
            attest_errc::stale, "attestation: made at " + utc_time_text(s.attested_at) + ", " +
                                    std::to_string(now - s.attested_at) + " s ago, more than --max-age " +
                                    std::to_string(settings.max_age->count()) +
                                    " s: an old attestation put back, or a mirror no longer attested"));
}

/// One check against the attestation whose bytes are `text`.
awaitable<check_report> check_once(store::store& mirror, std::string const& text, check_settings const& settings) {
    check_report report;
    auto opened = open_envelope(text, settings.trusted, settings.ns, settings.now);
    if (!opened) {
        report.problems.push_back(opened.error());
        co_return report;
    }
    report.statement = opened->statement;
    report.signer = opened->signer;
    auto const& s = *report.statement;
    check_times(s, settings, report);
    std::vector<std::string> attested; // read one by one where the mirror cannot be listed (HTTP)
    for (auto const& version : s.versions)
        attested.push_back(version.id);
    auto state = co_await read_mirror_state(mirror, settings.concurrency, nullptr, &attested);
    if (!state) {
        report.problems.push_back(state.error());
        co_return report;
    }
    if (state->fdl_json_sha256 != s.fdl_json_sha256)
        report.problems.push_back(mismatch("fdl.json: sha256 " + state->fdl_json_sha256 + " in the mirror, " +
                                           s.fdl_json_sha256 + " in the attestation"));
    if (state->repository_id.value_or("") != s.repository_id)
        report.problems.push_back(mismatch("fdl.json: repository id '" + state->repository_id.value_or("") +
                                           "', the attestation's '" + s.repository_id + "'"));
    compare_refs(s, *state, report);
    compare_versions(s, *state, report);
    co_return report;
}

bool has_mismatch(check_report const& report) {
    for (auto const& problem : report.problems)
        if (problem.code == attest_errc::mismatch)
            return true;
    return false;
}

} // namespace

awaitable<check_report> check_attestation(store::store& mirror, check_settings const& settings) {
    std::string const key(attestation_key);
    auto text = co_await store::read_if_present(mirror, key, settings.max_bytes);
    if (!text || !*text) {
        check_report report;
        if (text)
            report.problems.push_back(
                make_error(attest_errc::missing, "attestation: " + named(mirror, key) + ": the mirror holds no attestation"));
        else if (text.error().code == io::store_errc::too_large)
            report.problems.push_back(make_error(
                attest_errc::too_large, "attestation: " + named(mirror, key) + ": larger than " +
                                            std::to_string(settings.max_bytes >> 20) +
                                            " MiB, the most this memory limit lets it read (raise --memory-limit)"));
        else
            report.problems.push_back(with_context(text.error(), named(mirror, key)));
        co_return report;
    }
    auto report = co_await check_once(mirror, **text, settings);
    if (!has_mismatch(report))
        co_return report;
    // The daemon may have published and re-attested while this read: a new attestation
    // is checked once more; the same one stands. Only the first one's digest is kept
    // meanwhile: two texts of the limit's size are not held at once.
    auto const first = verify::sha256_of(**text);
    text->reset();
    auto again = co_await store::read_if_present(mirror, key, settings.max_bytes);
    if (again && *again && verify::sha256_of(**again) != first)
        report = co_await check_once(mirror, **again, settings);
    co_return report;
}

} // namespace mirror::attest
