#pragma once
// How to reach S3, resolved the way the AWS CLI and SDKs do it: credentials, region,
// endpoint, addressing style and CA bundle from fdl-mirror's own settings, the
// environment and the shared AWS files (~/.aws/credentials, ~/.aws/config). Pure: the
// environment is a snapshot passed in; only the files it names are read.
// References: AWS SDKs and Tools Reference Guide, "Shared config and credentials files"
// and "Service-specific endpoints"; botocore configloader.py and credentials.py.

#include "core/s3/sigv4.hpp"
#include "verify/error.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace mirror::s3 {

/// A snapshot of the process environment: variable values (an empty value counts as
/// unset, as in botocore) and the home folder that "~" stands for (empty when unknown).
struct environment {
    std::map<std::string, std::string> vars;
    std::filesystem::path home;
};

/// The real process environment and $HOME, read once. The only function here that reads
/// globals; call it at startup, from one thread.
environment current_environment();

/// What fdl-mirror's configuration file may say about S3. Every field is optional and
/// wins over the environment and the AWS files.
struct s3_settings {
    std::optional<std::string> profile;    ///< the AWS profile; see resolve_s3 for its effect
    std::optional<std::string> region;     ///< e.g. "eu-west-1", or a custom server's region
    std::optional<std::string> endpoint;   ///< "https://host:port", nothing after the authority but "/"
    std::optional<std::string> addressing; ///< "path", "virtual" or "auto"
    /// fdl-mirror's own credentials file (e.g. under systemd's LoadCredential=). Either
    /// plain lines before any section,
    ///     access_key_id = AKIA…
    ///     secret_access_key = …
    ///     session_token = …          (optional)
    /// or the AWS shared-credentials format, with the keys in the section named after
    /// the profile ([default] when none is chosen). Each key may also be spelled with the
    /// "aws_" prefix, in any case (so AWS_ACCESS_KEY_ID=… lines work too); '#' and ';'
    /// start whole-line comments. Keys outside sections win over sections.
    std::optional<std::filesystem::path> credentials_file;
    std::optional<std::filesystem::path> ca_bundle; ///< PEM roots to trust instead of the system's
};

/// Everything needed to sign and send S3 requests.
struct resolved_s3 {
    credentials creds;
    std::string region;
    /// "scheme://host[:port]" (the port only when not the scheme's default) of a custom
    /// endpoint, or nullopt for AWS's own (s3.<region>.amazonaws.com).
    std::optional<std::string> endpoint;
    /// The custom endpoint is plain http: allowed here (MinIO, s3rver on loopback), but
    /// callers should demand an explicit allowance before sending credentials over it.
    bool endpoint_is_plain_http = false;
    /// Path-style requests (https://host/bucket/key) rather than virtual-hosted
    /// (https://bucket.host/key). Callers must also honour bucket_needs_path_style.
    bool path_style = false;
    std::optional<std::filesystem::path> ca_bundle; ///< nullopt: the system's roots
    std::string profile;                            ///< the profile that was consulted
    /// Where the credentials came from, for messages: "environment", "file /run/…",
    /// "profile prod in /home/u/.aws/credentials". Never holds a secret.
    std::string credentials_source;
};

/// Resolves S3 access for `settings` in `env`. Precedence (first found wins):
/// - profile: settings.profile, AWS_PROFILE, "default".
/// - credentials: settings.credentials_file; the variables AWS_ACCESS_KEY_ID,
///   AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN) unless settings.profile is set (as
///   `aws --profile` does, an explicit profile skips them; AWS_PROFILE does not); the
///   profile's section in the shared credentials file (AWS_SHARED_CREDENTIALS_FILE or
///   ~/.aws/credentials, section [NAME]); the config file (AWS_CONFIG_FILE or
///   ~/.aws/config, section [profile NAME], or [default] for the default profile),
///   keys aws_access_key_id, aws_secret_access_key, aws_session_token.
/// - region: settings.region, AWS_REGION, AWS_DEFAULT_REGION, the profile's `region`,
///   "us-east-1".
/// - endpoint: settings.endpoint, AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's
///   `endpoint_url` for s3 (in its `services` section's `s3 =` block, then in its own
///   `s3 =` block), the profile's `endpoint_url`, none (AWS).
/// - addressing: settings.addressing, the profile's `s3 = addressing_style`, then
///   "auto": path-style for a custom endpoint, virtual-hosted for AWS's own (no endpoint,
///   or a host under amazonaws.com).
/// - CA bundle: settings.ca_bundle, AWS_CA_BUNDLE, the profile's `ca_bundle`, none.
/// Profile settings are read as botocore merges them: the credentials file's section
/// first, then the config file's. Missing AWS files are skipped, as the AWS tools do.
/// Fails with store_errc::access_denied when no source has credentials (the message
/// lists where it looked), or a source has only one of the two keys, or a file cannot be
/// read; with store_errc::rejected for a malformed file ("path:line: why"), a bad
/// region, endpoint or addressing value, or virtual-hosted addressing asked of an
/// endpoint that is an IP address. No message ever holds a secret.
result<resolved_s3> resolve_s3(s3_settings const& settings, environment const& env);

/// True when `bucket` cannot be a DNS label under TLS, so only path-style requests reach
/// it: not 3 to 63 characters of lower-case letters, digits, '-' and '.', a label that
/// starts or ends with '-', an empty label, the shape of an IPv4 address, or any '.'
/// (a dotted name does not match the endpoint's wildcard certificate; botocore's rule
/// for https, applied always since endpoints are https by default).
bool bucket_needs_path_style(std::string_view bucket);

} // namespace mirror::s3
