#include "verify/allowed_signers.hpp"

#include "verify/errors.hpp"
#include "verify/patterns.hpp"
#include "verify/security_key.hpp"
#include "verify/ssh_wire.hpp"

#include <algorithm>

#include <cctype>
#include <ctime>

namespace mirror::verify {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t'; }

void skip_spaces(std::string_view& s) {
    while (!s.empty() && is_space(s.front()))
        s.remove_prefix(1);
}

/// The next whitespace-delimited token; a token that starts with '"' runs to the closing
/// quote. nullopt for an unterminated quote.
std::optional<std::string> next_token(std::string_view& s) {
    skip_spaces(s);
    if (!s.empty() && s.front() == '"') {
        auto close = s.find('"', 1);
        if (close == std::string_view::npos)
            return std::nullopt;
        std::string token(s.substr(1, close - 1));
        s.remove_prefix(close + 1);
        return token;
    }
    std::size_t end = 0;
    while (end < s.size() && !is_space(s[end]))
        ++end;
    std::string token(s.substr(0, end));
    s.remove_prefix(end);
    return token;
}

/// Whether OpenSSH would read `name` as the type word of a key: an implementation name,
/// "rsa-sha2-512" and the webauthn name included, not a short name such as "ED25519".
bool is_key_type_name(std::string_view name) {
    std::string const type = canonical_key_type(name, false);
    return type == "ssh-ed25519" || type == "ssh-rsa" || type.starts_with("ecdsa-sha2-") ||
           type.starts_with("sk-") || is_certificate_type(type) || type == "ssh-dss";
}

bool starts_with_keyword(std::string_view options, std::string_view keyword) {
    if (options.size() < keyword.size())
        return false;
    for (std::size_t i = 0; i < keyword.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(options[i])) != keyword[i])
            return false;
    return true;
}

/// Reads a quoted option value ("…", with \" for a quote), as OpenSSH's opt_dequote.
std::optional<std::string> dequote(std::string_view& options) {
    if (options.empty() || options.front() != '"')
        return std::nullopt;
    options.remove_prefix(1);
    std::string value;
    while (!options.empty() && options.front() != '"') {
        if (options.size() >= 2 && options[0] == '\\' && options[1] == '"')
            options.remove_prefix(1);
        value += options.front();
        options.remove_prefix(1);
    }
    if (options.empty())
        return std::nullopt;
    options.remove_prefix(1);
    return value;
}

/// Parses the options field into `out`; returns the reason it is refused.
std::optional<std::string> parse_options(std::string_view options, allowed_signer& out) {
    while (!options.empty()) {
        if (starts_with_keyword(options, "cert-authority")) {
            options.remove_prefix(14);
            out.cert_authority = true;
        } else if (starts_with_keyword(options, "no-touch-required")) {
            options.remove_prefix(17);
            out.no_touch_required = true;
        } else if (starts_with_keyword(options, "verify-required")) {
            options.remove_prefix(15);
            out.verify_required = true;
        } else {
            std::optional<std::string>* text_slot = nullptr;
            std::optional<std::int64_t>* time_slot = nullptr;
            std::string_view name;
            if (starts_with_keyword(options, "namespaces="))
                name = "namespaces", text_slot = &out.namespaces;
            else if (starts_with_keyword(options, "valid-after="))
                name = "valid-after", time_slot = &out.valid_after;
            else if (starts_with_keyword(options, "valid-before="))
                name = "valid-before", time_slot = &out.valid_before;
            else
                return "unknown option '" + std::string(options.substr(0, options.find(','))).substr(0, 40) + "'";
            options.remove_prefix(name.size() + 1);
            auto value = dequote(options);
            if (!value)
                return std::string(name) + ": the value must be in double quotes";
            if ((text_slot && *text_slot) || (time_slot && *time_slot))
                return "more than one " + std::string(name);
            if (text_slot) {
                *text_slot = std::move(*value);
            } else {
                auto when = parse_signer_time(*value);
                if (!when)
                    return std::string(name) + ": '" + value->substr(0, 40) + "' is not YYYYMMDD[HHMM[SS]][Z|UTC]";
                *time_slot = *when;
            }
        }
        if (options.empty())
            break;
        if (options.front() != ',')
            return "options must be separated by ','";
        options.remove_prefix(1);
        if (options.empty())
            return "an option list ends with ','";
    }
    if (out.valid_after && out.valid_before && *out.valid_before <= *out.valid_after)
        return std::string("valid-before is not after valid-after");
    return std::nullopt;
}

/// Reads the options field: up to the first whitespace outside double quotes.
std::optional<std::string> options_token(std::string_view& s) {
    skip_spaces(s);
    std::size_t end = 0;
    bool quoted = false;
    while (end < s.size() && (quoted || !is_space(s[end]))) {
        if (s[end] == '\\' && quoted && end + 1 < s.size() && s[end + 1] == '"')
            ++end;
        else if (s[end] == '"')
            quoted = !quoted;
        ++end;
    }
    if (quoted)
        return std::nullopt;
    std::string token(s.substr(0, end));
    s.remove_prefix(end);
    return token;
}

std::optional<std::string> parse_line(std::string_view s, allowed_signer& out) {
    auto principals = next_token(s);
    if (!principals)
        return std::string("unterminated quote in the principals");
    if (principals->empty())
        return std::string("no principals");
    out.principals = std::move(*principals);
    std::string_view rest = s;
    auto type = next_token(rest);
    if (!type || !is_key_type_name(*type)) {
        auto options = options_token(s);
        if (!options)
            return std::string("unterminated quote in the options");
        if (auto problem = parse_options(*options, out))
            return problem;
        rest = s;
        type = next_token(rest);
        if (!type || !is_key_type_name(*type))
            return "'" + type.value_or("").substr(0, 40) + "' is not a key type";
    }
    auto base64 = next_token(rest);
    if (!base64 || base64->empty())
        return "no key after " + *type;
    auto blob = base64_decode(*base64);
    if (!blob)
        return std::string("the key is not base64");
    wire_reader in(*blob);
    auto inner = in.cstring();
    if (!inner || canonical_key_type(*inner) != canonical_key_type(*type, false))
        return "the key's blob is not a " + *type + " key";
    // A key of a type this build verifies must be whole and acceptable, as OpenSSH reads
    // it, and is kept in its canonical encoding (signatures' keys are compared in theirs);
    // other types (DSA, certificates) are kept as written: no signature we accept can
    // match them.
    auto key = parse_public_key_blob(*blob);
    if (!key && key.error().code != verify_errc::unsupported_key_type &&
        key.error().code != verify_errc::certificate_unsupported)
        return key.error().message;
    out.key_type = key ? key->type : std::move(*type);
    out.key_blob = key ? std::move(key->blob) : std::move(*blob);
    return std::nullopt; // what follows the key is a comment
}

bool time_allows(allowed_signer const& e, std::int64_t now) {
    return (!e.valid_after || now >= *e.valid_after) && (!e.valid_before || now <= *e.valid_before);
}

} // namespace

std::optional<std::int64_t> parse_signer_time(std::string_view text) {
    // OpenSSH 9.2's parse_absolute_time (misc.c), form by form: one suffix, 'Z' or 'z',
    // else "UTC" in any case, means UTC; then exactly 8, 12 or 14 characters cut at fixed
    // places and read as glibc's strptime reads %Y, %m, %d, %H, %M and %S.
    bool utc = false;
    if (text.size() > 1 && (text.back() == 'Z' || text.back() == 'z')) {
        utc = true;
        text.remove_suffix(1);
    } else if (text.size() > 3) {
        auto tail = text.substr(text.size() - 3);
        bool is_utc = true;
        for (std::size_t i = 0; i < 3; ++i)
            is_utc = is_utc && std::toupper(static_cast<unsigned char>(tail[i])) == "UTC"[i];
        if (is_utc) {
            utc = true;
            text.remove_suffix(3);
        }
    }
    if (text.size() != 8 && text.size() != 12 && text.size() != 14)
        return std::nullopt;
    // A field may start with white space (strptime skips it), then digits to its end.
    auto field = [&](std::size_t at, std::size_t len) -> std::optional<int> {
        std::string_view f = text.substr(at, len);
        while (!f.empty() && std::isspace(static_cast<unsigned char>(f.front())))
            f.remove_prefix(1);
        if (f.empty())
            return std::nullopt;
        int v = 0;
        for (char c : f) {
            if (c < '0' || c > '9')
                return std::nullopt;
            v = v * 10 + (c - '0');
        }
        return v;
    };
    auto year = field(0, 4), month = field(4, 2), day = field(6, 2);
    std::optional<int> hour = 0, minute = 0, second = 0;
    if (text.size() >= 12)
        hour = field(8, 2), minute = field(10, 2);
    if (text.size() == 14)
        second = field(12, 2);
    if (!year || !month || !day || !hour || !minute || !second)
        return std::nullopt;
    // strptime's ranges: the day is not checked against the month, and seconds go to 61;
    // timegm and mktime then normalise (31 February is 3 March), as OpenSSH's result is.
    if (*month < 1 || *month > 12 || *day < 1 || *day > 31 || *hour > 23 || *minute > 59 || *second > 61)
        return std::nullopt;
    std::tm tm{};
    tm.tm_year = *year - 1900;
    tm.tm_mon = *month - 1;
    tm.tm_mday = *day;
    tm.tm_hour = *hour;
    tm.tm_min = *minute;
    tm.tm_sec = *second;
    // OpenSSH sets tm_isdst to 0: a local time in summer is read as standard time.
    tm.tm_isdst = 0;
    std::time_t when = utc ? ::timegm(&tm) : std::mktime(&tm);
    if (when == static_cast<std::time_t>(-1) || when <= 0)
        return std::nullopt; // before the epoch; 0 itself OpenSSH's callers refuse
    return static_cast<std::int64_t>(when);
}

std::string skipped_line_warning(error const& skipped) {
    return skipped.message + " (this line of allowed_signers is skipped: it grants nothing)";
}

result<allowed_signers> parse_allowed_signers(std::string_view text, std::string path) {
    allowed_signers out{std::move(path), {}, {}};
    std::size_t number = 0;
    while (!text.empty()) {
        ++number;
        auto newline = text.find('\n');
        std::string_view line = text.substr(0, newline);
        text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
        if (line.ends_with('\r'))
            line.remove_suffix(1);
        skip_spaces(line);
        if (line.empty() || line.front() == '#')
            continue;
        allowed_signer entry;
        entry.line = number;
        if (auto problem = parse_line(line, entry))
            out.skipped.push_back(make_error(verify_errc::malformed_allowed_signers,
                                             out.path + ":" + std::to_string(number) + ": " + *problem));
        else
            out.entries.push_back(std::move(entry));
    }
    return out;
}

namespace {

/// The stage of a line that accepts (see stage_of).
constexpr int accepted_stage = 5;

/// The most specific reason no line accepted, by how far the best line got.
error no_line_accepts(allowed_signers const& signers, int stage, std::size_t line) {
    std::string where = signers.path + (line ? ":" + std::to_string(line) : "");
    switch (stage) {
    case 4: return make_error(verify_errc::outside_validity, where + ": the key is outside its valid-after/valid-before window");
    case 3: return make_error(verify_errc::security_key_flags,
                              where + ": the security key signed without the user presence or verification the line "
                                      "requires (no-touch-required, verify-required)");
    case 2: return make_error(verify_errc::namespace_not_allowed, where + ": the key is not allowed for this namespace");
    case 1: return make_error(verify_errc::principal_not_allowed, where + ": the key is listed, but not for this principal");
    default: return make_error(verify_errc::untrusted_key, signers.path + ": no line holds the signing key");
    }
}

/// Whether a security key's flags satisfy the line (and the certificate's verify-required).
bool flags_allow(allowed_signer const& e, ssh_certificate const* certificate, std::optional<std::uint8_t> flags) {
    bool const verification = e.verify_required || (certificate != nullptr && certificate->requires_verification());
    if (!flags)
        return !verification; // no security key: nothing to have been present for
    if (!e.no_touch_required && (*flags & user_present) == 0)
        return false;
    return !verification || (*flags & user_verified) != 0;
}

/// How far a line gets for the key: 0 not its key (or the wrong kind of line), 1 key,
/// 2 principal, 3 namespace, 4 security key flags, 5 time (accepted). For a certificate,
/// the line must be a cert-authority line holding its CA, and the certificate must allow
/// the principal.
int stage_of(allowed_signer const& e, ssh_public_key const& key, ssh_certificate const* certificate,
             std::optional<std::string_view> principal, std::optional<std::string_view> ns, std::int64_t now,
             std::optional<std::uint8_t> flags) {
    if (certificate == nullptr ? (e.cert_authority || e.key_blob != key.blob)
                               : (!e.cert_authority || e.key_blob != certificate->ca.blob))
        return 0;
    if (principal && match_pattern_list(*principal, e.principals) != list_match::positive)
        return 1;
    if (principal && certificate && !check_certificate_authority(*certificate, *principal, now))
        return 1;
    if (ns && e.namespaces && match_pattern_list(*ns, *e.namespaces) != list_match::positive)
        return 2;
    if (!flags_allow(e, certificate, flags))
        return 3;
    if (!time_allows(e, now))
        return 4;
    return accepted_stage;
}

/// For a certificate without a principal asked for: its best stage over the principals it
/// names.
int best_stage(allowed_signer const& e, ssh_public_key const& key, ssh_certificate const* certificate,
               std::optional<std::string_view> ns, std::int64_t now, std::optional<std::uint8_t> flags) {
    if (certificate == nullptr)
        return stage_of(e, key, nullptr, std::nullopt, ns, now, flags);
    int best = stage_of(e, key, certificate, std::nullopt, ns, now, flags) == 0 ? 0 : 1;
    for (auto const& name : certificate->principals)
        best = std::max(best, stage_of(e, key, certificate, name, ns, now, flags));
    return best;
}

} // namespace

result<allowed_signer const*> check_signer(allowed_signers const& signers, ssh_public_key const& key,
                                           std::string_view principal, std::string_view ns, std::int64_t now,
                                           ssh_certificate const* certificate, std::optional<std::uint8_t> sk_flags) {
    int best = 0;
    std::size_t best_line = 0;
    for (auto const& e : signers.entries) {
        int stage = stage_of(e, key, certificate, principal, ns, now, sk_flags);
        if (stage == accepted_stage)
            return &e; // the only success exit
        if (stage > best)
            best = stage, best_line = e.line;
    }
    if (certificate != nullptr && best == 1)
        if (auto why = check_certificate_authority(*certificate, principal, now); !why)
            return with_context(why.error(), signers.path + ":" + std::to_string(best_line));
    return no_line_accepts(signers, best, best_line);
}

std::vector<std::string_view> principal_items(std::string_view field) {
    std::vector<std::string_view> items;
    for (;;) {
        auto comma = field.find(',');
        std::string_view item = field.substr(0, comma);
        if (item.empty())
            return items;
        items.push_back(item);
        if (comma == std::string_view::npos)
            return items;
        field.remove_prefix(comma + 1);
    }
}

result<std::string> find_principals(allowed_signers const& signers, ssh_public_key const& key,
                                    ssh_certificate const* certificate, std::int64_t now,
                                    std::optional<std::string_view> ns) {
    for (auto const& e : signers.entries) {
        if (certificate == nullptr ? (e.cert_authority || e.key_blob != key.blob)
                                   : (!e.cert_authority || e.key_blob != certificate->ca.blob))
            continue;
        if (ns && e.namespaces && match_pattern_list(*ns, *e.namespaces) != list_match::positive)
            continue;
        if (!time_allows(e, now))
            continue;
        if (certificate == nullptr)
            return e.principals;
        auto const when = static_cast<std::uint64_t>(now < 0 ? 0 : now);
        if (certificate->type != 1 || certificate->principals.empty() || when < certificate->valid_after ||
            when >= certificate->valid_before)
            continue;
        // cert_filter_principals: each item of the line is one pattern, up to the first empty one.
        std::string found;
        for (auto item : principal_items(e.principals))
            for (auto const& name : certificate->principals)
                if (match_pattern(name, item))
                    found += (found.empty() ? "" : ",") + name;
        if (!found.empty())
            return found;
    }
    return make_error(verify_errc::principal_not_allowed,
                      signers.path + (certificate == nullptr
                                          ? ": no line holds the signing key (within its window and namespaces)"
                                          : ": no cert-authority line gives the certificate a principal"));
}

result<std::vector<allowed_signer const*>> find_signers(allowed_signers const& signers, ssh_public_key const& key,
                                                        std::optional<std::string_view> ns, std::int64_t now,
                                                        ssh_certificate const* certificate,
                                                        std::optional<std::uint8_t> sk_flags) {
    std::vector<allowed_signer const*> found;
    int best = 0;
    std::size_t best_line = 0;
    for (auto const& e : signers.entries) {
        int stage = best_stage(e, key, certificate, ns, now, sk_flags);
        if (stage == accepted_stage)
            found.push_back(&e);
        else if (stage > best)
            best = stage, best_line = e.line;
    }
    if (!found.empty())
        return found;
    if (certificate != nullptr && best == 1) {
        // Both arms string_view: with "" on one side the conditional would make a temporary
        // std::string, and the view would outlive it.
        std::string_view principal =
            certificate->principals.empty() ? std::string_view() : std::string_view(certificate->principals.front());
        if (auto why = check_certificate_authority(*certificate, principal, now); !why)
            return with_context(why.error(), signers.path + ":" + std::to_string(best_line));
    }
    return no_line_accepts(signers, best, best_line);
}

} // namespace mirror::verify
