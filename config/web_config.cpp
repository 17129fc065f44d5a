#include "config/web_config.hpp"

#include "config/detail/locations.hpp"
#include "config/detail/yaml_documents.hpp"
#include "config/detail/yaml_reader.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>

namespace mirror::config {

namespace {

using detail::map_reader;
using detail::problem_list;
using detail::quote;

constexpr std::uintmax_t max_web_config_size = std::uintmax_t{1} << 20;

/// The headers exporter-toolkit lets a file add, with the values it allows (none: any).
struct allowed_header {
    std::string_view name;
    std::vector<std::string_view> values;
};
std::array<allowed_header, 5> const allowed_headers{{
    {"Strict-Transport-Security", {}},
    {"X-Content-Type-Options", {"nosniff"}},
    {"X-Frame-Options", {"deny", "sameorigin"}},
    {"X-XSS-Protection", {}},
    {"Content-Security-Policy", {}},
}};

/// "$2y$10$" and 53 characters of bcrypt's base64: what Go's bcrypt and libxcrypt read.
/// The cost is not checked here (bcrypt_cost_problem says why one is refused).
bool is_bcrypt_hash(std::string_view hash) {
    if (hash.size() != 60 || !hash.starts_with("$2") || hash[3] != '$' || hash[6] != '$')
        return false;
    if (hash[2] != 'a' && hash[2] != 'b' && hash[2] != 'y')
        return false;
    if (!std::isdigit(static_cast<unsigned char>(hash[4])) || !std::isdigit(static_cast<unsigned char>(hash[5])))
        return false;
    return std::all_of(hash.begin() + 7, hash.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '/';
    });
}

std::optional<std::filesystem::path> read_file_path(map_reader& section, std::string_view key,
                                                    std::filesystem::path const& base) {
    auto found = section.scalar(key, "a path");
    if (!found)
        return std::nullopt;
    auto path = detail::resolve_path(found->first, base);
    if (!path.value)
        section.problems().add(found->second, section.subject(key) + " " + quote(found->first) + " " + path.why);
    return path.value;
}

/// PEM text written in the file (`cert`, `key`, `client_ca`); never quoted in a message.
std::string read_pem(map_reader& section, std::string_view key) {
    auto found = section.scalar(key, "PEM text");
    if (!found)
        return {};
    if (found->first.find("-----BEGIN ") == std::string::npos)
        section.problems().add(found->second, section.subject(key) + " is not PEM text (no -----BEGIN line)");
    return found->first;
}

/// Exactly one of `file_key` and `text_key`, for the server's certificate and key.
void need_one_of(map_reader& section, bool has_file, bool has_text, std::string_view text_key,
                 std::string_view file_key) {
    if (has_file && has_text)
        section.problems().add(section.key_mark(std::string(text_key)),
                               section.subject(text_key) + " and " + std::string(file_key) +
                                   " are both given: give one");
    else if (!has_file && !has_text)
        section.problems().add(section.mark(), section.what() + ": missing one of " + std::string(text_key) +
                                                   " or " + std::string(file_key));
}

std::optional<tls_server_settings> read_tls(map_reader& top, std::filesystem::path const& base) {
    auto node = top.mapping("tls_server_config");
    if (!node)
        return std::nullopt; // absent or empty: plain HTTP, as exporter-toolkit has it
    map_reader tls(*node, "tls_server_config", top.problems());
    tls_server_settings out;
    out.cert_file = read_file_path(tls, "cert_file", base);
    out.key_file = read_file_path(tls, "key_file", base);
    out.client_ca_file = read_file_path(tls, "client_ca_file", base);
    out.cert_pem = read_pem(tls, "cert");
    out.key_pem = read_pem(tls, "key");
    out.client_ca_pem = read_pem(tls, "client_ca");
    need_one_of(tls, tls.find("cert_file").has_value(), tls.find("cert").has_value(), "cert", "cert_file");
    need_one_of(tls, tls.find("key_file").has_value(), tls.find("key").has_value(), "key", "key_file");
    bool const has_ca_file = tls.find("client_ca_file").has_value();
    bool const has_ca_text = tls.find("client_ca").has_value();
    if (has_ca_file && has_ca_text)
        top.problems().add(tls.key_mark("client_ca"),
                           "tls_server_config: client_ca and client_ca_file are both given: give one");
    out.client_auth_type = tls.word<client_auth>("client_auth_type", {{"NoClientCert", client_auth::none},
                                                                      {"RequestClientCert", client_auth::request},
                                                                      {"RequireAnyClientCert", client_auth::require_any},
                                                                      {"RequireClientCert", client_auth::require_any},
                                                                      {"VerifyClientCertIfGiven", client_auth::verify_if_given},
                                                                      {"RequireAndVerifyClientCert",
                                                                       client_auth::require_and_verify}})
                               .value_or(client_auth::none);
    bool const verifies = out.client_auth_type == client_auth::verify_if_given ||
                          out.client_auth_type == client_auth::require_and_verify;
    if ((has_ca_file || has_ca_text) && out.client_auth_type == client_auth::none)
        top.problems().add(tls.key_mark(has_ca_file ? "client_ca_file" : "client_ca"),
                           "tls_server_config: a client CA is given without a client_auth_type that asks for "
                           "certificates (RequireAndVerifyClientCert authenticates clients)");
    if (verifies && !has_ca_file && !has_ca_text)
        top.problems().add(tls.key_mark("client_auth_type"),
                           "tls_server_config: client_auth_type " + std::string(to_string(out.client_auth_type)) +
                               " needs client_ca_file (the roots client certificates must chain to)");
    for (auto const& item : tls.list("client_allowed_sans")) {
        if (item.IsScalar() && !item.Scalar().empty())
            out.client_allowed_sans.push_back(item.Scalar());
        else
            top.problems().add(item.Mark(), "tls_server_config: client_allowed_sans: each item must be a "
                                            "non-empty string, not " + std::string(detail::kind_of(item)));
    }
    if (!out.client_allowed_sans.empty() && out.client_auth_type == client_auth::none)
        top.problems().add(tls.key_mark("client_allowed_sans"),
                           "tls_server_config: client_allowed_sans needs a client_auth_type that asks for certificates");
    std::initializer_list<std::pair<std::string_view, tls_version>> const versions{
        {"TLS10", tls_version::tls10}, {"TLS11", tls_version::tls11},
        {"TLS12", tls_version::tls12}, {"TLS13", tls_version::tls13}};
    out.min_version = tls.word<tls_version>("min_version", versions).value_or(out.min_version);
    out.max_version = tls.word<tls_version>("max_version", versions).value_or(out.max_version);
    if (out.min_version > out.max_version)
        top.problems().add(tls.key_mark("max_version"), "tls_server_config: max_version " +
                                                            std::string(to_string(out.max_version)) +
                                                            " is below min_version " +
                                                            std::string(to_string(out.min_version)));
    out.prefer_server_cipher_suites = tls.flag("prefer_server_cipher_suites").value_or(true);
    for (std::string_view unsupported : {"cipher_suites", "curve_preferences"})
        if (tls.find(unsupported))
            top.problems().add(tls.key_mark(unsupported),
                               "tls_server_config: " + std::string(unsupported) +
                                   " is not supported by fdl-mirror: OpenSSL's defaults for the TLS version apply "
                                   "(remove the key)");
    tls.finish();
    return out;
}

std::map<std::string, std::string> read_users(map_reader& top) {
    std::map<std::string, std::string> users;
    auto node = top.mapping("basic_auth_users");
    if (!node)
        return users;
    for (auto const& entry : *node) {
        YAML::Node const& name = entry.first;
        YAML::Node const& hash = entry.second;
        if (!name.IsScalar() || name.Scalar().empty()) {
            top.problems().add(name.Mark(), "basic_auth_users: a user name must be a non-empty string");
            continue;
        }
        std::string const subject = "basic_auth_users: user " + quote(name.Scalar());
        if (name.Scalar().find(':') != std::string::npos) {
            top.problems().add(name.Mark(), subject + " has a ':', which basic authentication cannot carry");
            continue;
        }
        // The hash is not quoted: a password written there by mistake must not reach a log.
        if (!hash.IsScalar() || !is_bcrypt_hash(hash.Scalar())) {
            top.problems().add(hash.Mark(), subject + ": the value is not a bcrypt hash ($2y$10$ and 53 characters; "
                                                      "make one with htpasswd -nBC 10 USER)");
            continue;
        }
        if (auto cost = (hash.Scalar()[4] - '0') * 10 + (hash.Scalar()[5] - '0'); cost > max_bcrypt_cost) {
            // Each wrong password costs 2^cost rounds on the daemon's one hashing thread:
            // at 16, four of them kept a real scraper waiting 16 s (issue 45).
            top.problems().add(hash.Mark(), subject + ": a bcrypt cost of " + std::to_string(cost) +
                                                ", more than the " + std::to_string(max_bcrypt_cost) +
                                                " this daemon accepts (make one with htpasswd -nBC 10 USER)");
            continue;
        }
        if (!users.emplace(name.Scalar(), hash.Scalar()).second)
            top.problems().add(name.Mark(), subject + " is given twice");
    }
    return users;
}

std::vector<std::pair<std::string, std::string>> read_http(map_reader& top) {
    std::vector<std::pair<std::string, std::string>> headers;
    auto node = top.mapping("http_server_config");
    if (!node)
        return headers;
    map_reader http(*node, "http_server_config", top.problems());
    http.flag("http2"); // fdl-mirror speaks HTTP/1.1 only; a scraper asking for HTTP/2 is answered in 1.1
    if (auto section = http.mapping("headers")) {
        map_reader given(*section, "http_server_config: headers", top.problems());
        for (auto const& allowed : allowed_headers) {
            auto value = given.scalar(allowed.name, "a string");
            if (!value || value->first.empty())
                continue; // blank: unset, as exporter-toolkit has it
            bool const accepted = allowed.values.empty() ||
                                  std::find(allowed.values.begin(), allowed.values.end(), value->first) !=
                                      allowed.values.end();
            if (!accepted) {
                std::string choices;
                for (auto choice : allowed.values)
                    choices += (choices.empty() ? "" : ", ") + std::string(choice);
                top.problems().add(value->second, given.subject(allowed.name) + " " + quote(value->first) +
                                                      " is not one of " + choices);
                continue;
            }
            headers.emplace_back(allowed.name, value->first);
        }
        given.finish();
    }
    http.finish();
    return headers;
}

} // namespace

std::string_view to_string(client_auth mode) noexcept {
    switch (mode) {
    case client_auth::none: return "NoClientCert";
    case client_auth::request: return "RequestClientCert";
    case client_auth::require_any: return "RequireAnyClientCert";
    case client_auth::verify_if_given: return "VerifyClientCertIfGiven";
    case client_auth::require_and_verify: return "RequireAndVerifyClientCert";
    }
    return "NoClientCert";
}

std::string_view to_string(tls_version version) noexcept {
    switch (version) {
    case tls_version::tls10: return "TLS10";
    case tls_version::tls11: return "TLS11";
    case tls_version::tls12: return "TLS12";
    case tls_version::tls13: return "TLS13";
    }
    return "TLS12";
}

web_config_result parse_web_config(std::string_view text, std::string_view file_name) {
    problem_list problems{std::string(file_name)};
    std::error_code ec;
    auto file = std::filesystem::absolute(std::filesystem::path(std::string(file_name)), ec).lexically_normal();
    auto root = detail::load_root(std::string(text), "the web configuration",
                                  "the web configuration is empty: it needs tls_server_config or basic_auth_users",
                                  problems);
    if (!root)
        return problems.take();
    web_config out;
    try {
        map_reader top(*root, "", problems);
        out.tls = read_tls(top, file.parent_path());
        out.users = read_users(top);
        out.headers = read_http(top);
        if (top.find("rate_limit"))
            problems.add(top.key_mark("rate_limit"),
                         "rate_limit is not supported by fdl-mirror (each connection has a deadline and a request "
                         "limit; remove the key)");
        top.finish();
    } catch (YAML::Exception const& e) {
        problems.add(e.mark, "cannot read this node: " + e.msg);
    }
    if (!problems.empty())
        return problems.take();
    out.file = file;
    return out;
}

web_config_result load_web_config(std::filesystem::path const& path) {
    problem_list problems{path.string()};
    auto const text = detail::read_config_file(path, max_web_config_size, "a web configuration", problems);
    if (!text)
        return problems.take();
    return parse_web_config(*text, path.string());
}

} // namespace mirror::config
