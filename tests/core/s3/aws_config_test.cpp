#include "core/s3/aws_config.hpp"
#include <doctest/doctest.h>

#include "core/io/errors.hpp"
#include "tests/support/temp_dir.hpp"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

namespace mirror::s3 {
std::ostream& operator<<(std::ostream& out, resolved_s3 const& r);
}

using namespace mirror::s3;
using mirror::io::store_errc;
namespace fs = std::filesystem;

// What doctest prints for a result that should have failed: never the secret.
std::ostream& mirror::s3::operator<<(std::ostream& out, resolved_s3 const& r) {
    return out << "credentials from " << r.credentials_source;
}

namespace {

// Distinctive, so a search of every message finds any leak.
constexpr char const* secret = "Zq9SECRETneverLEAK/abc+def";
constexpr char const* token = "TOKENzz9neverLEAK==";

// A home folder with ~/.aws in a temp dir, and a synthetic environment pointing at it.
struct world {
    mirror::test::temp_dir dir;
    environment env;

    world() {
        env.home = dir / "home";
        fs::create_directories(env.home / ".aws");
    }
    void write(fs::path const& path, std::string const& text) const { std::ofstream(path, std::ios::binary) << text; }
    void credentials(std::string const& text) const { write(env.home / ".aws/credentials", text); }
    void config(std::string const& text) const { write(env.home / ".aws/config", text); }
    fs::path own(std::string const& text) const {
        write(dir / "s3-credentials", text);
        return dir / "s3-credentials";
    }
};

// Any sign of the secret or the token, in any case.
bool leaks(std::string text) {
    for (char& c : text)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text.find("neverleak") != std::string::npos;
}

// Resolves, and checks that neither an error nor the source ever shows a secret.
mirror::result<resolved_s3> resolve(s3_settings const& settings, environment const& env) {
    auto r = resolve_s3(settings, env);
    std::string const shown = r ? r->credentials_source : r.error().message;
    CHECK_MESSAGE(!leaks(shown), shown);
    return r;
}

resolved_s3 ok(s3_settings const& settings, environment const& env) {
    auto r = resolve(settings, env);
    REQUIRE_MESSAGE(r.has_value(), r.error().message);
    return *r;
}

std::string keys(std::string const& id) {
    return "aws_access_key_id = " + id + "\naws_secret_access_key = " + secret + "\n";
}

void set_env_keys(environment& env, std::string const& id) {
    env.vars["AWS_ACCESS_KEY_ID"] = id;
    env.vars["AWS_SECRET_ACCESS_KEY"] = secret;
}

} // namespace

TEST_CASE("aws config: the profile comes from the settings, then AWS_PROFILE, then default") {
    world w;
    w.credentials("[default]\n" + keys("AKDEFAULT") + "[env]\n" + keys("AKENV") + "[set]\n" + keys("AKSET"));
    auto r = resolve({}, w.env);
    REQUIRE(r);
    CHECK(r->profile == "default");
    CHECK(r->creds.access_key_id == "AKDEFAULT");
    CHECK(r->credentials_source == "profile default in " + (w.env.home / ".aws/credentials").string());

    w.env.vars["AWS_PROFILE"] = "env";
    r = resolve({}, w.env);
    REQUIRE(r);
    CHECK(r->profile == "env");
    CHECK(r->creds.access_key_id == "AKENV");

    s3_settings settings;
    settings.profile = "set";
    r = resolve(settings, w.env);
    REQUIRE(r);
    CHECK(r->creds.access_key_id == "AKSET");
    CHECK(r->creds.secret_access_key == secret);
}

TEST_CASE("aws config: credentials precedence is settings file, environment, credentials file, config file") {
    world w;
    w.config("[default]\n" + keys("AKCONFIG"));
    auto r = resolve({}, w.env);
    REQUIRE(r);
    CHECK(r->creds.access_key_id == "AKCONFIG");
    CHECK(r->credentials_source == "profile default in " + (w.env.home / ".aws/config").string());

    w.credentials("[default]\n" + keys("AKSHARED") + "aws_session_token = " + token + "\n");
    r = resolve({}, w.env);
    REQUIRE(r);
    CHECK(r->creds.access_key_id == "AKSHARED");
    CHECK(r->creds.session_token == std::optional<std::string>(token));

    set_env_keys(w.env, "AKENV");
    r = resolve({}, w.env);
    REQUIRE(r);
    CHECK(r->creds.access_key_id == "AKENV");
    CHECK(r->credentials_source == "environment");
    CHECK_FALSE(r->creds.session_token);
    w.env.vars["AWS_SESSION_TOKEN"] = token;
    r = resolve({}, w.env);
    REQUIRE(r);
    CHECK(r->creds.session_token == std::optional<std::string>(token));

    s3_settings settings;
    settings.credentials_file = w.own(std::string("access_key_id = AKOWN\nsecret_access_key = ") + secret + "\n");
    r = resolve(settings, w.env);
    REQUIRE(r);
    CHECK(r->creds.access_key_id == "AKOWN");
    CHECK_FALSE(r->creds.session_token);
    CHECK(r->credentials_source == "file " + (w.dir / "s3-credentials").string());
}

TEST_CASE("aws config: AWS_PROFILE keeps environment keys but a profile in the settings skips them") {
    world w;
    w.credentials("[prod]\n" + keys("AKPROD"));
    set_env_keys(w.env, "AKENV");
    w.env.vars["AWS_PROFILE"] = "prod";
    auto r = resolve({}, w.env);
    REQUIRE(r);
    CHECK(r->creds.access_key_id == "AKENV");

    s3_settings settings;
    settings.profile = "prod";
    r = resolve(settings, w.env);
    REQUIRE(r);
    CHECK(r->creds.access_key_id == "AKPROD");
}

TEST_CASE("aws config: a profile is read from both AWS files, the credentials file first") {
    world w;
    w.credentials("[prod]\n" + keys("AKPROD") + "region = eu-west-3\n");
    w.config("[default]\nregion = us-west-2\n\n[profile prod]\nregion = eu-central-1\nca_bundle = /etc/ca.pem\n"
             "\n[profile other]\n" +
             keys("AKOTHER"));
    w.env.vars["AWS_PROFILE"] = "prod";
    auto r = resolve({}, w.env);
    REQUIRE(r);
    CHECK(r->creds.access_key_id == "AKPROD");
    CHECK(r->region == "eu-west-3"); // botocore merges the credentials file over the config file
    CHECK(r->ca_bundle == std::optional<fs::path>("/etc/ca.pem"));

    w.env.vars["AWS_PROFILE"] = "other";
    r = resolve({}, w.env);
    REQUIRE(r);
    CHECK(r->creds.access_key_id == "AKOTHER");
    CHECK(r->credentials_source == "profile other in " + (w.env.home / ".aws/config").string());
    CHECK(r->region == "us-east-1");

    w.env.vars.erase("AWS_PROFILE");
    w.config("[profile  \"default\"]\n" + keys("AKQUOTED") + "region=ap-south-1\n");
    r = resolve({}, w.env);
    REQUIRE(r);
    CHECK(r->region == "ap-south-1");
}

TEST_CASE("aws config: AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE move the AWS files") {
    world w;
    w.credentials("[default]\n" + keys("AKHOME"));
    w.write(w.dir / "creds", "[default]\n" + keys("AKMOVED"));
    w.write(w.env.home / "cfg", "[default]\nregion = sa-east-1\n");
    w.env.vars["AWS_SHARED_CREDENTIALS_FILE"] = (w.dir / "creds").string();
    w.env.vars["AWS_CONFIG_FILE"] = "~/cfg"; // expanded against the snapshot's home
    auto r = resolve({}, w.env);
    REQUIRE(r);
    CHECK(r->creds.access_key_id == "AKMOVED");
    CHECK(r->region == "sa-east-1");
}

TEST_CASE("aws config: fdl-mirror's own credentials file takes plain lines or the AWS format") {
    world w;
    s3_settings settings;
    settings.credentials_file =
        w.own(std::string("# from LoadCredential=\r\nAWS_ACCESS_KEY_ID=AKPLAIN\r\n\r\nAWS_SECRET_ACCESS_KEY = ") +
              secret + "\r\n; done\r\nsession_token = " + token + "\r\n");
    auto r = resolve(settings, w.env);
    REQUIRE(r);
    CHECK(r->creds.access_key_id == "AKPLAIN");
    CHECK(r->creds.secret_access_key == secret);
    CHECK(r->creds.session_token == std::optional<std::string>(token));

    w.own("[other]\n" + keys("AKOTHER") + "[default]\n" + keys("AKINI"));
    r = resolve(settings, w.env);
    REQUIRE(r);
    CHECK(r->creds.access_key_id == "AKINI");
    CHECK(r->credentials_source == "file " + (w.dir / "s3-credentials").string());

    settings.profile = "other";
    r = resolve(settings, w.env); // the profile names the section; no AWS file needs to know it
    REQUIRE(r);
    CHECK(r->creds.access_key_id == "AKOTHER");

    settings.profile = "absent";
    r = resolve(settings, w.env);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == store_errc::access_denied);
    CHECK(r.error().message.find("no [absent] section") != std::string::npos);

    settings.profile.reset();
    w.own(std::string("access_key_id = A\naws_access_key_id = B\nsecret_access_key = ") + secret + "\n");
    r = resolve(settings, w.env);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("both access_key_id and aws_access_key_id") != std::string::npos);

    settings.credentials_file = w.dir / "absent";
    set_env_keys(w.env, "AKENV"); // an explicit file never falls back
    r = resolve(settings, w.env);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == store_errc::access_denied);
    CHECK(r.error().message == (w.dir / "absent").string() + ": cannot read: no such file");
}

TEST_CASE("aws config: region precedence is settings, AWS_REGION, AWS_DEFAULT_REGION, profile, us-east-1") {
    world w;
    set_env_keys(w.env, "AK");
    CHECK(ok({}, w.env).region == "us-east-1");
    w.config("[default]\nregion = eu-north-1\n");
    CHECK(ok({}, w.env).region == "eu-north-1");
    w.env.vars["AWS_DEFAULT_REGION"] = "eu-south-1";
    CHECK(ok({}, w.env).region == "eu-south-1");
    w.env.vars["AWS_REGION"] = "me-south-1";
    CHECK(ok({}, w.env).region == "me-south-1");
    s3_settings settings;
    settings.region = "garage";
    CHECK(ok(settings, w.env).region == "garage");

    settings.region = "us-east-1/x";
    auto r = resolve(settings, w.env);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == store_errc::rejected);
    CHECK(r.error().message.starts_with("settings region: region 'us-east-1/x'"));
}

TEST_CASE("aws config: endpoint precedence is settings, the two variables, services, s3 block, profile") {
    world w;
    set_env_keys(w.env, "AK");
    auto endpoint = [&](s3_settings const& s = {}) { return ok(s, w.env).endpoint; };
    CHECK_FALSE(endpoint());
    w.config("[default]\nendpoint_url = https://profile.example\n");
    CHECK(endpoint() == "https://profile.example");
    w.config("[default]\nendpoint_url = https://profile.example\ns3 =\n  endpoint_url = https://block.example\n");
    CHECK(endpoint() == "https://block.example");
    w.config("[default]\nservices = local\nendpoint_url = https://profile.example\n"
             "s3 =\n  endpoint_url = https://block.example\n"
             "[services local]\ns3 =\n  endpoint_url = https://services.example:9443/\n");
    CHECK(endpoint() == "https://services.example:9443");
    w.env.vars["AWS_ENDPOINT_URL"] = "https://all.example:443";
    CHECK(endpoint() == "https://all.example");
    w.env.vars["AWS_ENDPOINT_URL_S3"] = "http://127.0.0.1:9000";
    auto r = resolve({}, w.env);
    REQUIRE(r);
    CHECK(r->endpoint == "http://127.0.0.1:9000");
    CHECK(r->endpoint_is_plain_http);
    s3_settings settings;
    settings.endpoint = "https://[::1]:8443";
    r = resolve(settings, w.env);
    REQUIRE(r);
    CHECK(r->endpoint == "https://[::1]:8443");
    CHECK_FALSE(r->endpoint_is_plain_http);
}

TEST_CASE("aws config: an endpoint is an http or https origin, nothing more") {
    world w;
    set_env_keys(w.env, "AK");
    s3_settings settings;
    for (char const* bad : {"https://minio.example/bucket", "https://minio.example/?x=1", "ftp://minio.example",
                            "minio.example:9000", "https://minio.example#top", "https://"}) {
        settings.endpoint = bad;
        auto r = resolve(settings, w.env);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == store_errc::rejected);
        CHECK(r.error().message.starts_with("settings endpoint: "));
    }
    settings.endpoint = std::string("https://AKID:") + secret + "@minio.example";
    auto r = resolve(settings, w.env);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("'@'") != std::string::npos);
}

TEST_CASE("aws config: addressing defaults to virtual on AWS and path elsewhere") {
    world w;
    set_env_keys(w.env, "AK");
    s3_settings settings;
    CHECK_FALSE(ok(settings, w.env).path_style); // AWS's own endpoint
    settings.endpoint = "https://s3.eu-west-1.amazonaws.com";
    CHECK_FALSE(ok(settings, w.env).path_style);
    settings.endpoint = "https://minio.example";
    CHECK(ok(settings, w.env).path_style);
    settings.endpoint = "http://10.0.0.5:9000";
    CHECK(ok(settings, w.env).path_style);

    settings.addressing = "virtual";
    settings.endpoint = "https://minio.example";
    CHECK_FALSE(ok(settings, w.env).path_style);
    settings.endpoint.reset();
    settings.addressing = "path";
    CHECK(ok(settings, w.env).path_style);
    settings.addressing = "auto";
    CHECK_FALSE(ok(settings, w.env).path_style);
}

TEST_CASE("aws config: addressing from the s3 block, and virtual with an IP address is refused") {
    world w;
    set_env_keys(w.env, "AK");
    w.config("[default]\ns3 =\n  addressing_style = path\n");
    CHECK(ok({}, w.env).path_style);
    s3_settings settings;
    settings.addressing = "virtual"; // the settings win
    CHECK_FALSE(ok(settings, w.env).path_style);

    w.config("[default]\ns3 =\n    addressing_style = virtual\n\n    endpoint_url = http://192.168.1.9:9000\n");
    auto r = resolve({}, w.env);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == store_errc::rejected);
    CHECK(r.error().message.find("IP address endpoint http://192.168.1.9:9000") != std::string::npos);
    CHECK(r.error().message.starts_with("profile default in " + (w.env.home / ".aws/config").string()));

    settings.endpoint = "https://[fd00::1]";
    r = resolve(settings, w.env);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.starts_with("settings addressing: "));

    settings.addressing = "dns";
    settings.endpoint.reset();
    r = resolve(settings, w.env);
    REQUIRE_FALSE(r);
    CHECK(r.error().message == "settings addressing: addressing 'dns' is not path, virtual or auto");
}

TEST_CASE("aws config: bucket names that are not DNS labels force path-style") {
    CHECK_FALSE(bucket_needs_path_style("fdl-mirror-01"));
    CHECK_FALSE(bucket_needs_path_style("abc"));
    CHECK(bucket_needs_path_style("my.bucket")); // TLS wildcard certificates do not cover dots
    CHECK(bucket_needs_path_style("MyBucket"));  // upper case
    CHECK(bucket_needs_path_style("my_bucket")); // underscore
    CHECK(bucket_needs_path_style("ab"));        // too short
    CHECK(bucket_needs_path_style(std::string(64, 'a')));
    CHECK(bucket_needs_path_style("-bucket"));
    CHECK(bucket_needs_path_style("bucket-"));
    CHECK(bucket_needs_path_style("192.168.5.4"));
}

TEST_CASE("aws config: CA bundle precedence is settings, AWS_CA_BUNDLE, profile, none") {
    world w;
    set_env_keys(w.env, "AK");
    CHECK_FALSE(ok({}, w.env).ca_bundle);
    w.config("[default]\nca_bundle = /from/config.pem\n");
    CHECK(ok({}, w.env).ca_bundle == std::optional<fs::path>("/from/config.pem"));
    w.env.vars["AWS_CA_BUNDLE"] = "/etc/ssl/certs/ca-certificates.crt";
    CHECK(ok({}, w.env).ca_bundle == std::optional<fs::path>("/etc/ssl/certs/ca-certificates.crt"));
    s3_settings settings;
    settings.ca_bundle = "/from/settings.pem";
    CHECK(ok(settings, w.env).ca_bundle == std::optional<fs::path>("/from/settings.pem"));
}

TEST_CASE("aws config: a malformed AWS file is refused with file and line, the line unshown") {
    world w;
    set_env_keys(w.env, "AK");
    std::string const config = (w.env.home / ".aws/config").string();
    struct bad {
        std::string text, where, why;
    };
    for (auto const& b : std::vector<bad>{
             {std::string("[default]\nregion = x\n") + secret + "\n", ":3: ", "not a [section]"},
             {"# top\nregion = eu-west-1\n", ":2: ", "a key before any [section]"},
             {"[default\n", ":1: ", "a section header is '[name]'"},
             {"[a]\n[b]\n\n[a]\n", ":4: ", "section [a] repeated"},
             {"[a]\nregion = x\nREGION = y\n", ":3: ", "'region' repeated in its section"},
             {std::string("[a]\naws_session_token = abc\n  ") + token + "\n", ":3: ", "continues only a sub-section"},
             {"[a]\ns3 =\n  addressing_style\n", ":3: ", "not a 'key = value' line inside a sub-section"},
             {"[a]\n = x\n", ":2: ", "a line without a key"},
         }) {
        CAPTURE(b.text);
        w.config(b.text);
        auto r = resolve({}, w.env);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == store_errc::rejected);
        CHECK(r.error().message.starts_with(config + b.where));
        CHECK(r.error().message.find(b.why) != std::string::npos);
    }
    // The shared credentials file is checked the same way, even when the keys come from elsewhere.
    w.config("");
    w.credentials("[default]\n\taws_access_key_id = AK\n");
    auto r = resolve({}, w.env);
    REQUIRE(r); // an indented first key is a plain key, as in configparser
    w.credentials("[default]\naws_secret_access_key\n");
    r = resolve({}, w.env);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.starts_with((w.env.home / ".aws/credentials").string() + ":2: "));
}

TEST_CASE("aws config: half a key pair is an error naming its source") {
    world w;
    w.env.vars["AWS_ACCESS_KEY_ID"] = "AKONLY";
    w.credentials("[default]\n" + keys("AKFILE")); // not a fallback: the environment is broken
    auto r = resolve({}, w.env);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == store_errc::access_denied);
    CHECK(r.error().message == "environment: AWS_ACCESS_KEY_ID without AWS_SECRET_ACCESS_KEY");

    w.env.vars.clear();
    w.credentials("[default]\naws_access_key_id = AKFILE\n");
    r = resolve({}, w.env);
    REQUIRE_FALSE(r);
    CHECK(r.error().message == "profile default in " + (w.env.home / ".aws/credentials").string() +
                                   ": aws_access_key_id without aws_secret_access_key");

    w.credentials("");
    s3_settings settings;
    settings.credentials_file = w.own(std::string("secret_access_key = ") + secret + "\n");
    r = resolve(settings, w.env);
    REQUIRE_FALSE(r);
    CHECK(r.error().message ==
          "file " + (w.dir / "s3-credentials").string() + ": secret_access_key without access_key_id");
}

TEST_CASE("aws config: no credentials anywhere lists where it looked") {
    world w;
    w.config("[profile prod]\nregion = eu-west-1\n");
    auto r = resolve({}, w.env);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == store_errc::access_denied);
    std::string const home = w.env.home.string();
    CHECK(r.error().message == "no S3 credentials for profile default: looked in the environment "
                               "(AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY unset), " +
                                   home + "/.aws/credentials (no such file), " + home +
                                   "/.aws/config (no [default] section)");
    s3_settings settings;
    settings.profile = "prod";
    set_env_keys(w.env, "AKENV");
    r = resolve(settings, w.env);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("the environment (skipped: the settings name a profile)") != std::string::npos);
    CHECK(r.error().message.find("/.aws/config (no aws_access_key_id in [profile prod])") != std::string::npos);

    w.env.home.clear(); // a system user without a home folder
    w.env.vars.clear();
    r = resolve({}, w.env);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("looked in the environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY unset), "
                                 "~/.aws/credentials (no home folder), ~/.aws/config (no home folder)") !=
          std::string::npos);
}

TEST_CASE("aws config: a named profile that neither AWS file has is refused") {
    world w;
    set_env_keys(w.env, "AK");
    w.env.vars["AWS_PROFILE"] = "prdo";
    auto r = resolve({}, w.env);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == store_errc::rejected);
    CHECK(r.error().message.starts_with("AWS_PROFILE: profile prdo is in neither "));
}

TEST_CASE("aws config: keys with spaces or control characters are refused, unshown") {
    world w;
    w.env.vars["AWS_ACCESS_KEY_ID"] = "AK";
    w.env.vars["AWS_SECRET_ACCESS_KEY"] = std::string(secret) + " ";
    auto r = resolve({}, w.env);
    REQUIRE_FALSE(r);
    CHECK(r.error().message == "environment: AWS_SECRET_ACCESS_KEY holds a space, a control or a non-ASCII character");
}

TEST_CASE("aws config: no message or source ever holds the secret") {
    world w;
    std::vector<std::string> shown;
    auto run = [&](s3_settings const& s) {
        auto r = resolve_s3(s, w.env);
        shown.push_back(r ? r->credentials_source : r.error().message);
    };
    std::string const s = secret, t = token;
    s3_settings own;
    own.credentials_file = w.dir / "s3-credentials";
    for (std::string const& text :
         {"secret_access_key = " + s + "\n", s + "\n", "[default]\n" + s + "\n", "  " + s + "\n",
          "access_key_id = A\nsecret_access_key = " + s + "\nsession_token = " + t + " x\n",
          "access_key_id = A\nsecret_access_key = " + s + "\n" + s + " = 1\n" + s + " = 2\n", "[" + s + "\n",
          "[default]\n[default]\n" + s, "access_key_id = A\nsecret_access_key = " + s + "\n"}) {
        w.own(text);
        run(own);
    }
    for (std::string const& text : {s + "\n", "[default]\naws_secret_access_key = " + s + "\n",
                                    "[default]\naws_access_key_id = A\naws_secret_access_key = " + s + "\n",
                                    "[default]\naws_access_key_id=A\naws_secret_access_key=" + s + "\n  " + t + "\n"}) {
        w.credentials(text);
        run({});
        w.credentials("");
        w.config(text);
        run({});
        w.config("");
    }
    w.env.vars["AWS_SECRET_ACCESS_KEY"] = s;
    run({});
    w.env.vars["AWS_ACCESS_KEY_ID"] = "A";
    w.env.vars["AWS_SESSION_TOKEN"] = t + "\n";
    run({});
    w.env.vars["AWS_SESSION_TOKEN"] = t;
    run({});
    s3_settings endpoint;
    endpoint.endpoint = "https://A:" + s + "@host";
    run(endpoint);
    endpoint.endpoint = "A:" + s + "@host";
    run(endpoint);
    REQUIRE(shown.size() == 22);
    for (auto const& text : shown) {
        CAPTURE(text);
        CHECK(!text.empty());
        CHECK_FALSE(leaks(text));
    }
}

TEST_CASE("aws config: current_environment snapshots the process environment") {
    ::setenv("FDL_MIRROR_AWS_CONFIG_TEST", "a=b", 1);
    auto env = current_environment();
    ::unsetenv("FDL_MIRROR_AWS_CONFIG_TEST");
    CHECK(env.vars["FDL_MIRROR_AWS_CONFIG_TEST"] == "a=b");
    CHECK_FALSE(env.home.empty());
}
