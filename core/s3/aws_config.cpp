#include "core/s3/aws_config.hpp"

#include "core/http/url.hpp"
#include "core/io/errors.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <tuple>
#include <unistd.h>
#include <vector>

extern char** environ; // POSIX: the process environment

namespace mirror::s3 {

using io::store_errc;
namespace fs = std::filesystem;

namespace {

// --- The AWS INI format (botocore configloader: configparser.RawConfigParser) ----------

struct ini_value {
    std::string text;                          // trimmed; empty for a sub-section opener
    std::map<std::string, std::string> nested; // the indented lines below "s3 ="
};
using ini_section = std::map<std::string, ini_value>;

struct ini_file {
    std::string name; // the path, for messages
    bool present = false;
    std::map<std::string, ini_section> sections; // "" holds keys before any section
};

std::string trim(std::string_view s) {
    auto const first = s.find_first_not_of(" \t");
    if (first == std::string_view::npos)
        return {};
    return std::string(s.substr(first, s.find_last_not_of(" \t") - first + 1));
}

std::string lower(std::string s) {
    for (char& c : s)
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    return s;
}

// A key as it may appear in a message: a stray line of a secret or token could have
// been read as a key, so only short, plain names are shown.
std::string shown(std::string const& key) {
    bool plain = key.size() <= 32;
    for (char c : key)
        plain = plain && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-');
    return plain ? "'" + key + "'" : "a key";
}

// "[profile  'prod' ]" -> "profile prod", as botocore's shlex.split of the header does.
std::string section_name(std::string_view inside) {
    std::string out, word;
    for (std::size_t i = 0; i <= inside.size(); ++i) {
        char c = i < inside.size() ? inside[i] : ' ';
        if (c == ' ' || c == '\t') {
            if (word.size() >= 2 && (word.front() == '"' || word.front() == '\'') && word.back() == word.front())
                word = word.substr(1, word.size() - 2);
            if (!word.empty())
                out += (out.empty() ? "" : " ") + word;
            word.clear();
        } else {
            word += c;
        }
    }
    return out;
}

// Lines are never echoed: any of them may be a secret.
result<ini_file> parse_ini(std::string_view text, std::string name, bool allow_sectionless) {
    ini_file out{std::move(name), true, {}};
    if (text.starts_with("\xEF\xBB\xBF"))
        text.remove_prefix(3); // a UTF-8 byte order mark
    ini_section* section = allow_sectionless ? &out.sections[""] : nullptr;
    ini_value* opener = nullptr; // the last key, which indented lines may continue
    int number = 0;
    while (!text.empty()) {
        auto const end = text.find('\n');
        std::string_view line = text.substr(0, end);
        text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
        ++number;
        if (line.ends_with('\r'))
            line.remove_suffix(1);
        auto const where = out.name + ":" + std::to_string(number) + ": ";
        auto fail = [&](std::string why) { return make_error(io::store_errc::rejected, where + why); };
        std::string const body = trim(line);
        if (body.empty() || body.front() == '#' || body.front() == ';')
            continue;
        if ((line.front() == ' ' || line.front() == '\t') && opener) {
            if (!opener->text.empty())
                return fail("an indented line continues only a sub-section such as 's3 =' (values do not span lines)");
            auto const eq = body.find('=');
            std::string key = eq == std::string::npos ? "" : lower(trim(body.substr(0, eq)));
            if (key.empty())
                return fail("not a 'key = value' line inside a sub-section");
            if (!opener->nested.emplace(key, trim(body.substr(eq + 1))).second)
                return fail(shown(key) + " repeated in the sub-section");
            continue;
        }
        if (body.front() == '[') {
            std::string header = body.back() == ']' ? section_name(body.substr(1, body.size() - 2)) : "";
            if (header.empty())
                return fail("a section header is '[name]'");
            if (out.sections.contains(header))
                return fail("section [" + header + "] repeated");
            section = &out.sections[header];
            opener = nullptr;
            continue;
        }
        auto const delimiter = body.find_first_of("=:");
        if (delimiter == std::string::npos)
            return fail("not a [section], 'key = value', comment or blank line");
        if (!section)
            return fail("a key before any [section]");
        std::string key = lower(trim(body.substr(0, delimiter)));
        if (key.empty())
            return fail("a line without a key before '='");
        auto [it, fresh] = section->emplace(key, ini_value{trim(body.substr(delimiter + 1)), {}});
        if (!fresh)
            return fail(shown(key) + " repeated in its section");
        opener = &it->second;
    }
    return out;
}

// Reads a whole file; nullopt when it does not exist. Not reading an existing file is an
// error, since a file the operator put there was meant to count.
result<std::optional<std::string>> read_text(fs::path const& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 && (errno == ENOENT || errno == ENOTDIR))
        return std::optional<std::string>{};
    auto fail = [&](std::string why) {
        return make_error(io::store_errc::access_denied, path.string() + ": cannot read: " + why);
    };
    if (fd < 0)
        return fail(std::strerror(errno));
    std::string text;
    struct stat info {};
    bool ok = ::fstat(fd, &info) == 0 && S_ISREG(info.st_mode);
    for (char buffer[4096]; ok && text.size() <= (1u << 20);) { // these files are small: 1 MiB caps them
        auto n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR)
            continue;
        ok = n >= 0;
        if (n <= 0)
            break;
        text.append(buffer, static_cast<std::size_t>(n));
    }
    int const err = errno;
    ::close(fd);
    if (!ok)
        return fail(S_ISREG(info.st_mode) ? std::strerror(err) : "not a regular file");
    if (text.size() > (1u << 20))
        return fail("larger than 1 MiB");
    return std::optional<std::string>{std::move(text)};
}

result<ini_file> load_ini(fs::path const& path, bool allow_sectionless) {
    if (path.empty())
        return ini_file{};
    auto text = read_text(path);
    if (!text)
        return text.error();
    if (!*text)
        return ini_file{path.string(), false, {}};
    return parse_ini(**text, path.string(), allow_sectionless);
}

// --- Lookups -----------------------------------------------------------------------

std::optional<std::string> var(environment const& env, std::string const& name) {
    auto it = env.vars.find(name);
    if (it == env.vars.end() || it->second.empty())
        return std::nullopt;
    return it->second;
}

fs::path expand_home(std::string const& path, environment const& env) {
    if (path == "~" || path.starts_with("~/"))
        return env.home.empty() ? fs::path{} : env.home / path.substr(std::min<std::size_t>(2, path.size()));
    return path;
}

ini_section const* find(ini_file const& file, std::string const& name) {
    auto it = file.sections.find(name);
    return it == file.sections.end() ? nullptr : &it->second;
}

std::optional<std::string> get(ini_section const* section, std::string const& key) {
    if (!section)
        return std::nullopt;
    auto it = section->find(key);
    if (it == section->end() || it->second.text.empty())
        return std::nullopt;
    return it->second.text;
}

std::optional<std::string> get_nested(ini_section const* section, std::string const& block, std::string const& key) {
    if (!section || !section->contains(block))
        return std::nullopt;
    auto const& nested = section->at(block).nested;
    auto it = nested.find(key);
    return it == nested.end() || it->second.empty() ? std::nullopt : std::optional(it->second);
}

// Both AWS files, and one profile in them as botocore sees it: the credentials file's
// section merged over the config file's, key by key (Session.full_config).
struct aws_files {
    ini_file shared, config;
    std::string profile, shared_name, config_name; // names for messages, even when absent
    ini_section const* in_shared = nullptr;        // [NAME]
    ini_section const* in_config = nullptr;        // [profile NAME], or [default]
    ini_section const* services = nullptr;         // [services X], named by the profile's `services`

    std::string config_header() const { return profile == "default" ? "[default]" : "[profile " + profile + "]"; }
    std::optional<std::string> value(std::string const& key) const {
        auto found = get(in_shared, key);
        return found ? found : get(in_config, key);
    }
    // The profile's own "s3 =" block is one value, so the first file that has it wins.
    ini_section const* s3_holder() const { return in_shared && in_shared->contains("s3") ? in_shared : in_config; }
    std::optional<std::string> s3(std::string const& key) const { return get_nested(s3_holder(), "s3", key); }
    // "profile prod in /home/u/.aws/config (region)", naming the file a value came from.
    std::string where(std::string const& key, bool nested = false) const {
        bool in_first = nested ? s3_holder() == in_shared && in_shared : get(in_shared, key).has_value();
        return "profile " + profile + " in " + (in_first ? shared_name : config_name) + " (" + (nested ? "s3 " : "") +
               key + ")";
    }
};

result<aws_files> load_aws_files(std::string profile, environment const& env) {
    aws_files out;
    out.profile = std::move(profile);
    for (auto [file, name, variable, fallback] :
         {std::tuple{&out.shared, &out.shared_name, "AWS_SHARED_CREDENTIALS_FILE", "~/.aws/credentials"},
          std::tuple{&out.config, &out.config_name, "AWS_CONFIG_FILE", "~/.aws/config"}}) {
        std::string const path = var(env, variable).value_or(fallback);
        auto loaded = load_ini(expand_home(path, env), false);
        if (!loaded)
            return loaded.error();
        *file = std::move(*loaded);
        *name = file->name.empty() ? path + " (no home folder)" : file->name;
    }
    return out;
}

// Points into `files`, once it sits where it stays.
void find_profile(aws_files& files) {
    files.in_shared = find(files.shared, files.profile);
    files.in_config = find(files.config, "profile " + files.profile);
    if (!files.in_config && files.profile == "default")
        files.in_config = find(files.config, "default");
    if (auto services = files.value("services"))
        files.services = find(files.config, "services " + *services);
}

// --- Credentials -------------------------------------------------------------------

// Keys and tokens go into headers: printable ASCII only, no spaces.
result<void> check_text(std::string const& value, std::string const& field, std::string const& source) {
    for (unsigned char c : value)
        if (c <= 0x20 || c >= 0x7f)
            return make_error(io::store_errc::rejected,
                              source + ": " + field + " holds a space, a control or a non-ASCII character");
    return {};
}

result<credentials> complete(std::optional<std::string> id, std::optional<std::string> secret,
                             std::optional<std::string> token, std::string const& id_name,
                             std::string const& secret_name, std::string const& source) {
    if (!id || !secret)
        return make_error(io::store_errc::access_denied,
                          source + ": " +
                              (id ? id_name + " without " + secret_name : secret_name + " without " + id_name));
    for (auto const& [field, value] :
         {std::pair{id_name, id}, std::pair{secret_name, secret}, std::pair{std::string("session token"), token}})
        if (value)
            if (auto ok = check_text(*value, field, source); !ok)
                return ok.error();
    return credentials{std::move(*id), std::move(*secret), std::move(token)};
}

// The AWS files' keys, in a section; nullopt when it has neither key.
result<std::optional<credentials>> from_section(ini_section const* section, std::string const& source) {
    auto id = get(section, "aws_access_key_id");
    auto secret = get(section, "aws_secret_access_key");
    if (!id && !secret)
        return std::optional<credentials>{};
    auto found =
        complete(id, secret, get(section, "aws_session_token"), "aws_access_key_id", "aws_secret_access_key", source);
    if (!found)
        return found.error();
    return std::optional(std::move(*found));
}

// fdl-mirror's own file: either spelling of each key; plain lines win over sections.
result<credentials> from_own_file(ini_file const& file, std::string const& profile) {
    auto pick = [](ini_section const* s, std::string const& key) -> result<std::optional<std::string>> {
        auto plain = get(s, key), prefixed = get(s, "aws_" + key);
        if (plain && prefixed)
            return make_error(io::store_errc::rejected, "both " + key + " and aws_" + key + " are set");
        return plain ? plain : prefixed;
    };
    ini_section const* section = find(file, "");
    std::string source = "file " + file.name;
    if (!get(section, "access_key_id") && !get(section, "aws_access_key_id") && !get(section, "secret_access_key") &&
        !get(section, "aws_secret_access_key")) {
        section = find(file, profile);
        source += " [" + profile + "]";
        if (!section)
            return make_error(io::store_errc::access_denied,
                              source + ": no access_key_id line and no [" + profile + "] section");
    }
    auto id = pick(section, "access_key_id");
    auto secret = pick(section, "secret_access_key");
    auto token = pick(section, "session_token");
    for (auto* r : {&id, &secret, &token})
        if (!*r)
            return with_context(r->error(), source);
    return complete(*id, *secret, *token, "access_key_id", "secret_access_key", source);
}

// --- Endpoint ----------------------------------------------------------------------

bool is_ip_address(std::string const& host) {
    if (host.find(':') != std::string::npos) // only IPv6 literals hold ':' in a host
        return true;
    return !host.empty() && host.find_first_not_of("0123456789.") == std::string::npos;
}

bool is_aws_host(std::string host) {
    host = lower(std::move(host));
    return host.ends_with(".amazonaws.com") || host.ends_with(".amazonaws.com.cn");
}

struct endpoint_info {
    std::string text, host;
    bool plain_http = false;
};

result<endpoint_info> check_endpoint(std::string const& url, std::string const& source) {
    auto refuse = [&](std::string why) { return make_error(io::store_errc::rejected, source + ": " + why); };
    // Not even echoed: "user:secret@host" is how a secret would sneak in.
    if (url.find('@') != std::string::npos)
        return refuse("the endpoint holds '@': user information is not accepted (credentials never go in URLs)");
    auto parsed = http::parse_location(url);
    if (!parsed)
        return with_context(parsed.error(), source);
    if (parsed->path != "/" || !parsed->query.empty())
        return refuse("'" + url + "': an endpoint is scheme://host[:port], with no path or query");
    return endpoint_info{parsed->scheme() + "://" + parsed->host_header(), parsed->host, !parsed->tls};
}

result<void> check_region(std::string const& region, std::string const& source) {
    bool ok = !region.empty() && region.size() <= 64;
    for (char c : region)
        ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '_' || c == '.');
    if (!ok)
        return make_error(io::store_errc::rejected, source + ": region '" + region.substr(0, 64) +
                                                    "' is not letters, digits, '-', '_' and '.' (at most 64)");
    return {};
}

template <class T>
std::optional<std::pair<T, std::string>>
first_of(std::initializer_list<std::pair<std::optional<T>, std::string>> options) {
    for (auto const& [value, source] : options)
        if (value)
            return std::pair{*value, source};
    return std::nullopt;
}

// --- Resolution steps ----------------------------------------------------------------

// The first source that has either key must have both; explicit settings win.
result<void> resolve_credentials(s3_settings const& settings, environment const& env, aws_files const& files,
                                 resolved_s3& out) {
    if (settings.credentials_file) {
        auto own = load_ini(*settings.credentials_file, true);
        if (!own)
            return own.error();
        if (!own->present)
            return make_error(io::store_errc::access_denied,
                              settings.credentials_file->string() + ": cannot read: no such file");
        auto found = from_own_file(*own, files.profile);
        if (!found)
            return found.error();
        out.creds = std::move(*found);
        out.credentials_source = "file " + own->name;
        return {};
    }
    std::vector<std::string> looked;
    auto id = var(env, "AWS_ACCESS_KEY_ID"), secret = var(env, "AWS_SECRET_ACCESS_KEY");
    if (settings.profile) {
        // As `aws --profile`: an explicit profile takes its keys from the files.
        looked.push_back("the environment (skipped: the settings name a profile)");
    } else if (id || secret) {
        auto found = complete(id, secret, var(env, "AWS_SESSION_TOKEN"), "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                              "environment");
        if (!found)
            return found.error();
        out.creds = std::move(*found);
        out.credentials_source = "environment";
        return {};
    } else {
        looked.push_back("the environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY unset)");
    }
    struct file_source {
        ini_file const& file;
        ini_section const* section;
        std::string name, header;
    };
    for (auto const& [file, section, name, header] :
         {file_source{files.shared, files.in_shared, files.shared_name, "[" + files.profile + "]"},
          file_source{files.config, files.in_config, files.config_name, files.config_header()}}) {
        std::string const source = "profile " + files.profile + " in " + name;
        auto found = from_section(section, source);
        if (!found)
            return found.error();
        if (*found) {
            out.creds = std::move(**found);
            out.credentials_source = source;
            return {};
        }
        looked.push_back(name + (!file.present ? (file.name.empty() ? "" : " (no such file)")
                                 : !section    ? " (no " + header + " section)"
                                               : " (no aws_access_key_id in " + header + ")"));
    }
    std::string list;
    for (auto const& place : looked)
        list += (list.empty() ? "" : ", ") + place;
    return make_error(io::store_errc::access_denied,
                      "no S3 credentials for profile " + files.profile + ": looked in " + list);
}

result<void> resolve_endpoint(s3_settings const& settings, environment const& env, aws_files const& files,
                              resolved_s3& out) {
    auto endpoint = first_of<std::string>(
        {{settings.endpoint, "settings endpoint"},
         {var(env, "AWS_ENDPOINT_URL_S3"), "AWS_ENDPOINT_URL_S3"},
         {var(env, "AWS_ENDPOINT_URL"), "AWS_ENDPOINT_URL"},
         {get_nested(files.services, "s3", "endpoint_url"),
          "profile " + files.profile + " in " + files.config_name + " (services s3 endpoint_url)"},
         {files.s3("endpoint_url"), files.where("endpoint_url", true)},
         {files.value("endpoint_url"), files.where("endpoint_url")}});
    std::optional<endpoint_info> custom;
    if (endpoint) {
        auto checked = check_endpoint(endpoint->first, endpoint->second);
        if (!checked)
            return checked.error();
        custom = *checked;
        out.endpoint = custom->text;
        out.endpoint_is_plain_http = custom->plain_http;
    }

    auto addressing = first_of<std::string>({{settings.addressing, "settings addressing"},
                                             {files.s3("addressing_style"), files.where("addressing_style", true)}});
    std::string const style = addressing ? addressing->first : "auto";
    if (style != "path" && style != "virtual" && style != "auto")
        return make_error(io::store_errc::rejected, addressing->second + ": addressing '" + style.substr(0, 32) +
                                                    "' is not path, virtual or auto");
    if (style == "virtual" && custom && is_ip_address(custom->host))
        return make_error(io::store_errc::rejected, addressing->second +
                                                    ": virtual-hosted addressing puts the bucket in the host name, "
                                                    "which cannot work with the IP address endpoint " +
                                                    custom->text + ": use path");
    // "auto", as botocore: virtual-hosted on AWS's own hosts, path-style elsewhere.
    out.path_style = style == "path" || (style == "auto" && custom && !is_aws_host(custom->host));
    return {};
}

} // namespace

environment current_environment() {
    environment env;
    for (char** entry = environ; entry && *entry; ++entry) {
        std::string_view text = *entry;
        auto eq = text.find('=');
        if (eq != std::string_view::npos)
            env.vars.emplace(text.substr(0, eq), text.substr(eq + 1));
    }
    if (char const* home = std::getenv("HOME"); home && *home)
        env.home = home;
    else if (passwd const* user = ::getpwuid(::getuid()); user && user->pw_dir) // as expanduser does
        env.home = user->pw_dir;
    return env;
}

bool bucket_needs_path_style(std::string_view bucket) {
    if (bucket.size() < 3 || bucket.size() > 63 || bucket.find('.') != std::string_view::npos)
        return true;
    for (char c : bucket)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
            return true;
    return bucket.front() == '-' || bucket.back() == '-';
}

result<resolved_s3> resolve_s3(s3_settings const& settings, environment const& env) {
    auto const named =
        first_of<std::string>({{settings.profile, "settings profile"}, {var(env, "AWS_PROFILE"), "AWS_PROFILE"}});
    std::string profile = named ? named->first : "default";
    if (profile.empty() || profile.find_first_of("[]\r\n") != std::string::npos)
        return make_error(io::store_errc::rejected, named->second + ": not a profile name");
    auto files = load_aws_files(profile, env);
    if (!files)
        return files.error();
    find_profile(*files);

    resolved_s3 out;
    out.profile = profile;
    if (auto ok = resolve_credentials(settings, env, *files, out); !ok)
        return ok.error();
    // botocore's ProfileNotFound: a profile named but in neither AWS file is a typo.
    if (named && profile != "default" && !settings.credentials_file && !files->in_shared && !files->in_config)
        return make_error(io::store_errc::rejected, named->second + ": profile " + profile + " is in neither " +
                                                    files->shared_name + " nor " + files->config_name);

    auto region = first_of<std::string>({{settings.region, "settings region"},
                                         {var(env, "AWS_REGION"), "AWS_REGION"},
                                         {var(env, "AWS_DEFAULT_REGION"), "AWS_DEFAULT_REGION"},
                                         {files->value("region"), files->where("region")}});
    out.region = region ? region->first : "us-east-1";
    if (auto ok = check_region(out.region, region ? region->second : "default region"); !ok)
        return ok.error();

    if (auto ok = resolve_endpoint(settings, env, *files, out); !ok)
        return ok.error();

    auto ca_bundle = first_of<std::string>(
        {{var(env, "AWS_CA_BUNDLE"), "AWS_CA_BUNDLE"}, {files->value("ca_bundle"), files->where("ca_bundle")}});
    if (settings.ca_bundle)
        out.ca_bundle = settings.ca_bundle;
    else if (ca_bundle)
        out.ca_bundle = fs::path(ca_bundle->first);
    return out;
}

} // namespace mirror::s3
