// libFuzzer target: URLs (core/http/url.hpp) as an operator gives an origin or endpoint
// and as a server's Location header gives a redirect. Besides the sanitizers: a location
// reads back from its own text unchanged; a base ends in '/'; a key below a base stays
// below it and reads back; a refusal never repeats the user information of the URL (a
// password would reach the logs).

#include "core/http/url.hpp"
#include "core/fdl/paths.hpp"
#include "core/io/errors.hpp"
#include "tests/fuzz/support/check.hpp"

#include <boost/url/pct_string_view.hpp>

#include <cctype>

using namespace mirror;
using namespace mirror::http;
using mirror::fuzz::check;

namespace {

bool same(location const& a, location const& b) {
    return a.tls == b.tls && a.host == b.host && a.port == b.port && a.path == b.path && a.query == b.query;
}

void check_round_trip(location const& where, std::string_view input) {
    check(where.path.starts_with('/'), "a location whose path is not absolute", input);
    auto again = parse_location(where.text());
    check(again.has_value(), "a location's text is refused", where.text());
    check(same(*again, where), "a location reads back different from its text", where.text());
}

/// The user information of `url` when it starts as a URL with an authority does
/// ("scheme://user:password@host…"): what a refusal must not repeat.
std::string_view userinfo_of(std::string_view url) {
    auto scheme_end = url.find("://");
    if (scheme_end == std::string_view::npos || scheme_end == 0)
        return {};
    for (char c : url.substr(0, scheme_end))
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.')
            return {};
    auto authority = url.substr(scheme_end + 3);
    authority = authority.substr(0, authority.find_first_of("/?#"));
    auto at = authority.rfind('@');
    return at == std::string_view::npos ? std::string_view{} : authority.substr(0, at);
}

void check_refusal(result<location> const& parsed, std::string_view url) {
    if (parsed)
        return;
    check(parsed.error().code == io::store_errc::rejected, "a URL refused with another code", url);
    // Looked for as "user:password@", and only when the URL holds that once (in its
    // authority): the bare text may appear elsewhere ("htt" in "http://"), and so may the
    // same text before another '@' in the path. "user:***@" or "***@" is what a message
    // shows in its place, so a secret that is part of that mask proves nothing.
    auto secret = userinfo_of(url);
    std::string needle = std::string(secret) + "@";
    auto occurrences = [](std::string_view text, std::string_view what) {
        std::size_t n = 0;
        for (auto at = text.find(what); at != std::string_view::npos; at = text.find(what, at + 1))
            ++n;
        return n;
    };
    auto colon = secret.find(':');
    std::string mask = (colon == std::string_view::npos ? std::string("***") : std::string(secret.substr(0, colon)) + ":***") + "@";
    if (!secret.empty() && occurrences(url, needle) == 1 && mask.find(needle) == std::string::npos)
        check(parsed.error().message.find(needle) == std::string::npos,
              "a refusal repeats the URL's user information", parsed.error().message);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(unsigned char const* data, std::size_t size) {
    auto text = mirror::fuzz::as_text(data, size);
    auto where = parse_location(text);
    check_refusal(where, text);
    if (where)
        check_round_trip(*where, text);

    auto base = parse_base(text);
    check_refusal(base, text);
    if (base) {
        check(base->path.ends_with('/') && base->query.empty(), "a base without a final '/' or with a query", text);
        check_round_trip(*base, text);
        for (std::string_view key : {"versions/019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c/version.json",
                                     "data/main/t/a b%c?d#e.parquet", "refs/heads/feature+x"}) {
            auto below = key_location(*base, key);
            check(below.path.starts_with(base->path), "a key's location is not below its base", key);
            check_round_trip(below, key);
        }
    }

    // The input as a Location header, from an https and a plain http origin.
    for (std::string_view from : {"https://data.example.org/lake/versions/x/version.json",
                                  "http://127.0.0.1:8080/repo/refs.json"}) {
        auto origin = parse_location(from);
        auto next = resolve_redirect(*origin, text);
        if (next)
            check_round_trip(*next, text);
        else
            check(next.error().code == io::store_errc::rejected, "a redirect refused with another code", text);
    }
    // The input as a key below a fixed base, when it is one (key_location takes checked
    // keys): the location names exactly that key below the base.
    if (!fdl::relative_path_problem(text)) {
        auto fixed = parse_base("https://data.example.org/lake/");
        auto below = key_location(*fixed, text);
        check_round_trip(below, text);
        auto path = boost::urls::make_pct_string_view(below.path);
        check(path.has_value() && path->decode() == "/lake/" + std::string(text),
              "a key's location decodes to another path", below.path);
    }
    return 0;
}
