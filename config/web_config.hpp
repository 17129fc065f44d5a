#pragma once
// The web configuration file of the daemon's HTTP endpoints (/metrics, /status, /healthz,
// /readyz, POST /trigger): the format of Prometheus's exporter-toolkit, so that one file
// serves every exporter of a host (docs/configuration.md, "Securing the endpoints"). TLS
// with optional client certificates, and basic authentication with bcrypt hashes. This
// reads and checks the YAML only; the certificates and keys it names are loaded by the
// daemon (daemon/status/web_security.hpp), which check-config runs too.

#include "config/config_problem.hpp"

#include <boost/system/result.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mirror::config {

/// Go's tls.ClientAuthType, by exporter-toolkit's names.
enum class client_auth {
    none,               ///< NoClientCert (the default)
    request,            ///< RequestClientCert: asked for, neither required nor verified
    require_any,        ///< RequireAnyClientCert: required, not verified
    verify_if_given,    ///< VerifyClientCertIfGiven
    require_and_verify, ///< RequireAndVerifyClientCert: the one that authenticates
};
std::string_view to_string(client_auth mode) noexcept; ///< the file's word

enum class tls_version { tls10, tls11, tls12, tls13 };
std::string_view to_string(tls_version version) noexcept; ///< "TLS12"

struct tls_server_settings {
    /// The server's certificate chain and key: a file (absolute), or PEM text written in
    /// the file (`cert`, `key`), exactly one of each.
    std::optional<std::filesystem::path> cert_file;
    std::optional<std::filesystem::path> key_file;
    std::string cert_pem;
    std::string key_pem; ///< secret: never shown
    client_auth client_auth_type = client_auth::none;
    /// The roots that client certificates must chain to; needed by the verifying modes,
    /// refused without a mode that asks for a certificate.
    std::optional<std::filesystem::path> client_ca_file;
    std::string client_ca_pem;
    /// When not empty, a client certificate must carry one of these exactly as a SAN (DNS
    /// name, e-mail address, IP address or URI).
    std::vector<std::string> client_allowed_sans;
    tls_version min_version = tls_version::tls12;
    tls_version max_version = tls_version::tls13;
    bool prefer_server_cipher_suites = true;
    bool operator==(tls_server_settings const&) const = default;
};

/// The highest bcrypt cost basic_auth_users may have: each comparison takes 2^cost rounds
/// (cost 12, about 0.25 s here), and a wrong password is compared too.
inline constexpr int max_bcrypt_cost = 12;

struct web_config {
    std::filesystem::path file;              ///< absolute: where it was read
    std::optional<tls_server_settings> tls;  ///< nullopt: plain HTTP
    std::map<std::string, std::string> users; ///< basic_auth_users: user -> bcrypt hash (secret)
    /// http_server_config.headers: added to every answer (the names and values
    /// exporter-toolkit allows).
    std::vector<std::pair<std::string, std::string>> headers;
    bool operator==(web_config const&) const = default;
};

using web_config_result = boost::system::result<web_config, config_problems>;

/// Reads and checks the web configuration in `text`; relative paths resolve against
/// `file_name`'s folder, as exporter-toolkit resolves them. Every problem at once, as
/// `file:line:col: message`; a secret (a key, a hash) is never quoted in one.
web_config_result parse_web_config(std::string_view text, std::string_view file_name);

/// Reads the file at `path` (at most 1 MiB) and parses it as parse_web_config does.
web_config_result load_web_config(std::filesystem::path const& path);

} // namespace mirror::config
