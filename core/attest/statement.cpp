#include "core/attest/statement.hpp"

#include <algorithm>

#include "core/attest/errors.hpp"
#include "core/fdl/ids.hpp"
#include "core/fdl/json_fields.hpp"
#include "core/fdl/paths.hpp"
#include "verify/sha256.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <cstdio>
#include <ctime>

namespace mirror::attest {

namespace json = boost::json;

std::string utc_time_text(std::int64_t unix_seconds) {
    std::time_t t = static_cast<std::time_t>(unix_seconds);
    std::tm parts{};
    char text[32] = {};
    if (gmtime_r(&t, &parts) == nullptr || std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts) == 0)
        return "1970-01-01T00:00:00Z";
    return text;
}

std::optional<std::int64_t> parse_utc_time(std::string_view text) {
    // Exactly YYYY-MM-DDTHH:MM:SSZ: one form, so that two texts of one instant are one text.
    if (text.size() != 20 || text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' ||
        text[16] != ':' || text[19] != 'Z')
        return std::nullopt;
    auto number = [&](std::size_t at, std::size_t digits) -> std::optional<int> {
        int value = 0;
        for (std::size_t i = at; i < at + digits; ++i) {
            if (text[i] < '0' || text[i] > '9')
                return std::nullopt;
            value = value * 10 + (text[i] - '0');
        }
        return value;
    };
    auto year = number(0, 4), month = number(5, 2), day = number(8, 2);
    auto hour = number(11, 2), minute = number(14, 2), second = number(17, 2);
    if (!year || !month || !day || !hour || !minute || !second || *month < 1 || *month > 12 || *day < 1 ||
        *day > 31 || *hour > 23 || *minute > 59 || *second > 59)
        return std::nullopt;
    std::tm parts{};
    parts.tm_year = *year - 1900;
    parts.tm_mon = *month - 1;
    parts.tm_mday = *day;
    parts.tm_hour = *hour;
    parts.tm_min = *minute;
    parts.tm_sec = *second;
    std::int64_t seconds = timegm(&parts);
    if (utc_time_text(seconds) != text) // 31 February, and the like
        return std::nullopt;
    return seconds;
}

std::string location_without_secrets(std::string_view location) {
    std::string out(location.substr(0, location.find_first_of("?#")));
    if (auto scheme = out.find("://"); scheme != std::string::npos) {
        auto start = scheme + 3;
        auto end = out.find('/', start);
        auto at = out.rfind('@', end == std::string::npos ? std::string::npos : end);
        if (at != std::string::npos && at >= start && (end == std::string::npos || at < end))
            out.erase(start, at + 1 - start);
    }
    return out;
}

namespace {

json::object digest_of(std::string const& sha256) { return json::object{{"sha256", sha256}}; }

json::value optional_text(std::string const& text) { return text.empty() ? json::value(nullptr) : json::value(text); }

} // namespace

std::string render_statement(mirror_statement const& s) {
    json::array subject;
    subject.push_back(json::object{{"name", "fdl.json"}, {"digest", digest_of(s.fdl_json_sha256)}});
    for (auto const& ref : s.refs)
        subject.push_back(json::object{{"name", ref.name},
                                       {"digest", digest_of(ref.version_json_sha256)},
                                       {"annotations", json::object{{"version", ref.version}}}});
    json::array versions;
    for (auto const& v : s.versions)
        versions.push_back(json::object{
            {"id", v.id}, {"version_json_sha256", v.version_json_sha256}, {"signer", optional_text(v.signer)}});
    json::object predicate{
        {"repository_id", s.repository_id},
        {"origin", s.origin},
        {"mirror", s.mirror},
        {"attested_at", utc_time_text(s.attested_at)},
        {"verified_at", utc_time_text(s.verified_at)},
        {"expires", utc_time_text(s.expires)},
        {"signature_policy", json::object{{"mode", s.signature_policy.mode},
                                          {"namespace", s.signature_policy.ns},
                                          {"allowed_signers_sha256",
                                           optional_text(s.signature_policy.allowed_signers_sha256)}}},
        {"versions", std::move(versions)},
        {"tool", json::object{{"name", "fdl-mirror"}, {"version", s.tool_version}}},
        {"instance", s.instance},
        {"fencing_token", s.fencing_token ? json::value(*s.fencing_token) : json::value(nullptr)},
    };
    json::object statement{{"_type", statement_type},
                           {"subject", std::move(subject)},
                           {"predicateType", predicate_type},
                           {"predicate", std::move(predicate)}};
    return json::serialize(statement) + "\n";
}

namespace {

constexpr std::string_view where = "attestation statement";

error malformed(std::string const& what) { return make_error(attest_errc::malformed, std::string(where) + ": " + what); }

/// Reads the field `key` of `fields` as a string that `valid` accepts; `what` says what it should be.
template <class Valid>
result<std::string> checked_string(fdl::object_fields const& fields, std::string_view key, Valid valid,
                                   std::string_view what) {
    auto text = fields.string(key);
    if (!text)
        return make_error(attest_errc::malformed, text.error().message);
    if (!valid(*text))
        return malformed(fields.name_of(key) + ": not " + std::string(what));
    return *text;
}

bool is_digest(std::string_view text) { return verify::parse_sha256_hex(text).has_value(); }

result<std::string> nullable_string(fdl::object_fields const& fields, std::string_view key) {
    auto const* value = fields.find(key);
    if (value == nullptr)
        return malformed(fields.name_of(key) + ": missing");
    if (value->is_null())
        return std::string();
    if (!value->is_string())
        return malformed(fields.name_of(key) + ": neither a string nor null");
    return std::string(value->as_string());
}

result<std::int64_t> time_field(fdl::object_fields const& fields, std::string_view key) {
    auto text = fields.string(key);
    if (!text)
        return make_error(attest_errc::malformed, text.error().message);
    auto seconds = parse_utc_time(*text);
    if (!seconds)
        return malformed(fields.name_of(key) + ": not a time of the form 2026-12-05T13:00:00Z");
    return *seconds;
}

/// The subjects: fdl.json first, then each ref, by name, once.
result<void> read_subjects(fdl::object_fields const& top, mirror_statement& out) {
    auto subjects = top.optional_array("subject");
    if (!subjects)
        return make_error(attest_errc::malformed, subjects.error().message);
    bool fdl_json = false;
    for (std::size_t i = 0; i < (*subjects)->size(); ++i) {
        auto const& item = (**subjects)[i];
        std::string const at = "subject[" + std::to_string(i) + "]";
        if (!item.is_object())
            return malformed(at + ": not an object");
        fdl::object_fields subject(item.as_object(), where, at);
        auto name = subject.string("name");
        auto digest = subject.child("digest");
        if (!name || !digest)
            return make_error(attest_errc::malformed, (!name ? name.error() : digest.error()).message);
        auto sha256 = checked_string(*digest, "sha256", is_digest, "64 lower-case hex digits");
        if (!sha256)
            return sha256.error();
        if (*name == "fdl.json") {
            if (std::exchange(fdl_json, true))
                return malformed(at + ": fdl.json named twice");
            out.fdl_json_sha256 = *sha256;
            continue;
        }
        if (fdl::ref_name_problem(*name))
            return malformed(at + ".name: '" + *name + "' is neither fdl.json nor a ref");
        auto annotations = subject.child("annotations");
        if (!annotations)
            return make_error(attest_errc::malformed, annotations.error().message);
        auto version = checked_string(*annotations, "version", fdl::is_version_id, "a version id");
        if (!version)
            return version.error();
        if (!out.refs.empty() && out.refs.back().name >= *name)
            return malformed(at + ": refs are not in name order, or one is named twice");
        out.refs.push_back({*name, *version, *sha256});
    }
    if (!fdl_json)
        return malformed("subject: fdl.json is not named");
    return {};
}

result<void> read_versions(fdl::object_fields const& predicate, mirror_statement& out) {
    auto versions = predicate.optional_array("versions");
    if (!versions)
        return make_error(attest_errc::malformed, versions.error().message);
    out.versions.reserve((*versions)->size());
    for (std::size_t i = 0; i < (*versions)->size(); ++i) {
        auto const& item = (**versions)[i];
        std::string const at = "predicate.versions[" + std::to_string(i) + "]";
        if (!item.is_object())
            return malformed(at + ": not an object");
        fdl::object_fields version(item.as_object(), where, at);
        auto id = checked_string(version, "id", fdl::is_version_id, "a version id");
        if (!id)
            return id.error();
        auto sha256 = checked_string(version, "version_json_sha256", is_digest, "64 lower-case hex digits");
        if (!sha256)
            return sha256.error();
        auto signer = nullable_string(version, "signer");
        if (!signer)
            return signer.error();
        if (!out.versions.empty() && out.versions.back().id >= *id)
            return malformed(at + ": versions are not in id order, or one is named twice");
        out.versions.push_back({*id, *sha256, *signer});
    }
    return {};
}

} // namespace

result<mirror_statement> parse_statement(std::string_view text) {
    auto value = fdl::parse_json(text, where, statement_tree_limit(text.size()));
    if (!value)
        return make_error(attest_errc::malformed, value.error().message);
    auto top = fdl::object_fields::top(*value, where);
    if (!top)
        return make_error(attest_errc::malformed, top.error().message);
    auto type = top->string("_type");
    auto kind = top->string("predicateType");
    if (!type || *type != statement_type)
        return malformed("_type: not " + std::string(statement_type));
    if (!kind || *kind != predicate_type)
        return malformed("predicateType: not " + std::string(predicate_type) + " (a statement of another kind)");
    mirror_statement out;
    if (auto subjects = read_subjects(*top, out); !subjects)
        return subjects.error();
    auto predicate = top->child("predicate");
    if (!predicate)
        return make_error(attest_errc::malformed, predicate.error().message);
    auto id = checked_string(*predicate, "repository_id", [](std::string_view t) { return !t.empty(); }, "an id");
    auto origin = predicate->string("origin");
    auto mirror = predicate->string("mirror");
    auto instance = predicate->string("instance");
    if (!id)
        return id.error();
    if (!origin || !mirror || !instance)
        return make_error(attest_errc::malformed, (!origin ? origin : !mirror ? mirror : instance).error().message);
    out.repository_id = *id, out.origin = *origin, out.mirror = *mirror, out.instance = *instance;
    auto attested = time_field(*predicate, "attested_at");
    auto verified = time_field(*predicate, "verified_at");
    auto expires = time_field(*predicate, "expires");
    if (!attested || !verified || !expires)
        return (!attested ? attested : !verified ? verified : expires).error();
    out.attested_at = *attested, out.verified_at = *verified, out.expires = *expires;
    auto policy = predicate->child("signature_policy");
    if (!policy)
        return make_error(attest_errc::malformed, policy.error().message);
    auto mode = checked_string(
        *policy, "mode", [](std::string_view m) { return m == "required" || m == "if-present" || m == "off"; },
        "required, if-present or off");
    auto ns = policy->string("namespace");
    auto signers = nullable_string(*policy, "allowed_signers_sha256");
    if (!mode)
        return mode.error();
    if (!ns)
        return make_error(attest_errc::malformed, ns.error().message);
    if (!signers)
        return signers.error();
    if (!signers->empty() && !is_digest(*signers))
        return malformed("predicate.signature_policy.allowed_signers_sha256: not 64 lower-case hex digits");
    out.signature_policy = {*mode, *ns, *signers};
    if (auto versions = read_versions(*predicate, out); !versions)
        return versions.error();
    auto tool = predicate->child("tool");
    if (!tool)
        return make_error(attest_errc::malformed, tool.error().message);
    auto tool_version = tool->string("version");
    if (!tool_version)
        return make_error(attest_errc::malformed, tool_version.error().message);
    out.tool_version = *tool_version;
    auto const* token = predicate->find("fencing_token");
    if (token == nullptr || !(token->is_null() || fdl::as_count(*token)))
        return malformed("predicate.fencing_token: neither a count nor null");
    if (!token->is_null())
        out.fencing_token = *fdl::as_count(*token);
    return out;
}

std::size_t attestation_limit(std::uint64_t capacity) {
    if (capacity == 0)
        return max_attestation_bytes;
    return static_cast<std::size_t>(std::clamp<std::uint64_t>(capacity / 8, std::uint64_t{1} << 20,
                                                              max_attestation_bytes));
}

std::size_t statement_tree_limit(std::size_t text_bytes) { return 2 * text_bytes + (std::size_t{1} << 20); }

} // namespace mirror::attest
