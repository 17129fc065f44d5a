#include "daemon/cli/check_config.hpp"

#include "daemon/status/status_server.hpp"
#include "daemon/status/web_security.hpp"
#include "config/event_secrets.hpp"

#include "core/catalog/catalog_reader.hpp"
#include "core/catalog/sandbox.hpp"
#include "core/http/tls_roots.hpp"
#include "core/s3/aws_config.hpp"
#include "daemon/service/pass_setup.hpp"
#include "daemon/common/terminal_text.hpp"
#include "verify/allowed_signers.hpp"
#include "verify/signing_key.hpp"
#include "core/fdl/paths.hpp"
#include "core/fdl/ref_patterns.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <variant>

namespace mirror::daemon {

namespace {

/// The file's bytes, or why it cannot be read.
std::variant<std::string, std::string> read_text_file(std::filesystem::path const& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return std::variant<std::string, std::string>(std::in_place_index<1>, "does not exist");
    if (!std::filesystem::is_regular_file(path, ec))
        return std::variant<std::string, std::string>(std::in_place_index<1>, "is not a file");
    std::ifstream in(path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.is_open() || in.bad())
        return std::variant<std::string, std::string>(std::in_place_index<1>, "cannot be read");
    return std::variant<std::string, std::string>(std::in_place_index<0>, std::move(text));
}

/// When `file` is one systemd's LoadCredential= makes at the service's start, and the
/// service is not running (its credentials folder is absent): the note to give instead of
/// a problem. "" otherwise.
std::string not_yet_loaded(std::filesystem::path const& file) {
    std::vector<std::filesystem::path> roots{"/run/credentials"};
    if (char const* dir = std::getenv("CREDENTIALS_DIRECTORY"); dir != nullptr && *dir != '\0')
        roots.emplace_back(std::filesystem::path(dir).parent_path());
    for (auto const& root : roots) {
        auto relative = file.lexically_normal().lexically_relative(root);
        if (relative.empty() || *relative.begin() == ".." || std::distance(relative.begin(), relative.end()) < 2)
            continue;
        std::error_code ec;
        auto service_folder = root / *relative.begin();
        if (std::filesystem::exists(service_folder, ec))
            return ""; // the service runs, and this credential is not among its own: a problem
        return "does not exist now; systemd makes it when the service starts (LoadCredential=, "
               "docs/operations.md#credentials): it is read then";
    }
    return "";
}

} // namespace

std::vector<std::string> check_named_files(config::daemon_config const& cfg, std::vector<std::string>* warnings,
                                           bool before_service_start) {
    std::vector<std::string> problems;
    std::set<std::filesystem::path> signers_checked;
    for (auto const& repo : cfg.repositories) {
        // The patterns of a partial mirror, read as the passes read them (core's syntax).
        for (auto const* patterns : {&repo.include_refs, &repo.exclude_refs})
            for (auto const& text : *patterns)
                if (auto parsed = fdl::ref_pattern::parse(text); !parsed)
                    problems.push_back("repository '" + repo.name + "': refs: " + parsed.error().message);
        if (repo.head && (fdl::ref_name_problem(*repo.head) || !fdl::is_mirrored_ref(*repo.head)))
            problems.push_back("repository '" + repo.name + "': head: '" + *repo.head +
                               "' is not a branch or tag name");
    }
    for (auto const& repo : cfg.repositories) {
        auto const& file = repo.settings.allowed_signers;
        if (!file || !signers_checked.insert(*file).second)
            continue;
        auto text = read_text_file(*file);
        std::string where = "repository '" + repo.name + "': allowed_signers: " + file->string() + ": ";
        if (text.index() == 1) {
            problems.push_back(where + std::get<1>(text));
            continue;
        }
        auto parsed = verify::parse_allowed_signers(std::get<0>(text), file->string());
        if (!parsed)
            problems.push_back("repository '" + repo.name + "': allowed_signers: " + parsed.error().message);
        else if (warnings != nullptr)
            for (auto const& skipped : parsed->skipped)
                warnings->push_back("repository '" + repo.name + "': " + verify::skipped_line_warning(skipped));
    }
    for (auto const& entry : cfg.stores) {
        std::string const where = "store '" + entry.match + "': ";
        if (auto const& file = entry.ca_bundle) {
            auto text = read_text_file(*file);
            if (text.index() == 1)
                problems.push_back(where + "ca_bundle: " + file->string() + ": " + std::get<1>(text));
            else if (auto why = http::ca_bundle_problem(*file); !why.empty())
                problems.push_back(where + "ca_bundle: " + file->string() + ": " + why);
        }
        if (auto const& file = entry.credentials_file) {
            auto text = read_text_file(*file);
            if (text.index() == 1) {
                auto note = before_service_start ? not_yet_loaded(*file) : std::string();
                if (!note.empty() && std::get<1>(text) == "does not exist") {
                    if (warnings != nullptr)
                        warnings->push_back(where + "credentials_file: " + file->string() + ": " + note);
                } else {
                    problems.push_back(where + "credentials_file: " + file->string() + ": " + std::get<1>(text));
                }
                continue;
            }
            // Read as the store reads it: the same keys, profiles and messages (never a secret).
            throttle_registry throttles;
            auto options = store_options_for(cfg, entry.match, throttles);
            if (auto resolved = s3::resolve_s3(options.s3, s3::current_environment()); !resolved)
                problems.push_back(where + "credentials_file: " + resolved.error().message);
        }
    }
    if (cfg.attestation) {
        // Loaded as the daemon signs with it: a key it could not sign with is a problem now.
        auto const& file = cfg.attestation->key_file;
        auto note = before_service_start ? not_yet_loaded(file) : std::string();
        std::error_code ec;
        if (!note.empty() && !std::filesystem::exists(file, ec)) {
            if (warnings != nullptr)
                warnings->push_back("attestation: key_file: " + file.string() + ": " + note);
        } else if (auto key = verify::signing_key::load(file); !key) {
            problems.push_back("attestation: key_file: " + key.error().message);
        }
    }
    for (auto const& problem : check_events(cfg, warnings))
        problems.push_back(problem);
    if (cfg.web_config_file) {
        // Loaded as the endpoints will serve it: the YAML, then the certificate, key and CA.
        auto web = load_web_settings(*cfg.web_config_file);
        if (auto const* found = std::get_if<std::vector<std::string>>(&web))
            for (auto const& problem : *found)
                problems.push_back("web_config_file: " + problem);
    }
    return problems;
}

std::vector<std::string> check_events(config::daemon_config const& cfg, std::vector<std::string>* warnings) {
    std::vector<std::string> problems;
    if (!cfg.events)
        return problems;
    auto const& events = *cfg.events;
    auto secrets = config::load_event_secrets(events.secrets_file);
    if (!secrets) {
        for (auto const& problem : secrets.error())
            problems.push_back("events: secrets_file: " + problem.text());
        return problems;
    }
    for (auto const& repo : cfg.repositories) {
        if (repo.events.webhook && !secrets->webhooks.contains(repo.name))
            problems.push_back("repository '" + repo.name + "': events: webhook, but " + events.secrets_file.string() +
                               " has no secret for it under webhooks:");
        if (repo.events.s3 && !secrets->s3_token)
            problems.push_back("repository '" + repo.name + "': events: s3, but " + events.secrets_file.string() +
                               " has no s3_token");
    }
    if (warnings != nullptr) {
        std::map<std::string, std::vector<std::string>> sharing; // secret -> repositories (never printed)
        for (auto const& [name, secret] : secrets->webhooks)
            sharing[secret].push_back(name);
        for (auto const& [secret, names] : sharing) {
            if (names.size() < 2)
                continue;
            std::string list;
            for (auto const& name : names)
                list += (list.empty() ? "'" : ", '") + name + "'";
            warnings->push_back("events: secrets_file: " + events.secrets_file.string() + ": repositories " + list +
                                " share one webhook secret: give each its own, so that one leaked secret exposes one "
                                "repository");
        }
    }
    // The events' listener is the one thing that may face other hosts, and then only over
    // TLS: a webhook's body and an S3 token cross the network (docs/events.md).
    boost::system::error_code ec;
    auto address = net::ip::make_address(events.listen.host, ec);
    bool const loopback = events.listen.host == "localhost" || (!ec && serves_status_to(address));
    if (!loopback) {
        bool tls = false;
        if (cfg.web_config_file) {
            auto web = load_web_settings(*cfg.web_config_file);
            if (auto const* settings = std::get_if<0>(&web))
                tls = (*settings)->config.tls.has_value();
        }
        if (!tls)
            problems.push_back("events: listen " + config::to_string(events.listen) +
                               " reaches beyond this host: it needs TLS (web_config_file with tls_server_config), or "
                               "listen on loopback behind a reverse proxy that terminates TLS (docs/events.md)");
    }
    return problems;
}

std::string endpoint_security(config::daemon_config const& cfg) {
    if (!cfg.web_config_file)
        return "plain HTTP";
    auto web = load_web_settings(*cfg.web_config_file);
    auto const* settings = std::get_if<0>(&web);
    if (settings == nullptr)
        return "web configuration " + cfg.web_config_file->string() + " does not load";
    auto const& loaded = (*settings)->config;
    std::string out = loaded.tls ? "TLS" : "plain HTTP";
    if (loaded.tls && loaded.tls->client_auth_type != config::client_auth::none)
        out += std::string(", client certificates (") + std::string(config::to_string(loaded.tls->client_auth_type)) + ")";
    if (!loaded.users.empty())
        out += ", basic authentication (" + std::to_string(loaded.users.size()) + " user" +
               (loaded.users.size() == 1 ? "" : "s") + ")";
    return out;
}

std::optional<config::daemon_config> load_for_command(std::string const& path) {
    auto loaded = config::load_config(path);
    if (loaded)
        return std::move(*loaded);
    for (auto const& problem : loaded.error())
        std::fprintf(stderr, "%s\n", problem.text().c_str());
    return std::nullopt;
}

config::repository_config const* repository_for_command(config::daemon_config const& cfg, std::string const& name,
                                                        std::string const& command, std::string const& file) {
    for (auto const& r : cfg.repositories)
        if (r.name == name)
            return &r;
    print_error(command + ": no repository named '" + name + "' in " + file);
    return nullptr;
}

int run_check_config(std::string const& path, std::optional<std::string> const& web_config_file) {
    auto loaded = config::load_config(path);
    if (!loaded) {
        for (auto const& problem : loaded.error())
            std::fprintf(stderr, "%s\n", problem.text().c_str());
        std::fprintf(stderr, "fdl-mirror: %s: %zu problem%s\n", path.c_str(), loaded.error().size(),
                     loaded.error().size() == 1 ? "" : "s");
        return exit_config;
    }
    if (web_config_file) // --web.config.file, as `run` takes it
        loaded->web_config_file = std::filesystem::absolute(*web_config_file).lexically_normal();
    std::vector<std::string> warnings;
    auto problems = check_named_files(*loaded, &warnings, true);
    for (auto const& warning : warnings)
        std::fprintf(stderr, "warning: %s\n", terminal_safe(warning, false).c_str());
    if (!problems.empty()) {
        for (auto const& problem : problems)
            std::fprintf(stderr, "%s: %s\n", path.c_str(), problem.c_str());
        std::fprintf(stderr, "fdl-mirror: %s: %zu problem%s\n", path.c_str(), problems.size(),
                     problems.size() == 1 ? "" : "s");
        return exit_config;
    }
    std::string names;
    for (auto const& repo : loaded->repositories)
        names += (names.empty() ? "" : ", ") + repo.name;
    std::printf("%s: valid; %zu repositor%s (%s); listening on %s (%s); state in %s\n", path.c_str(),
                loaded->repositories.size(), loaded->repositories.size() == 1 ? "y" : "ies", names.c_str(),
                config::to_string(loaded->listen).c_str(), endpoint_security(*loaded).c_str(),
                loaded->state_dir.c_str());
    // What the unit's MemoryMax= must allow for this configuration (docs/configuration.md).
    std::printf("%s: memory: at most %llu MiB with the catalog readers (MemoryMax=%lluM)\n", path.c_str(),
                static_cast<unsigned long long>(config::service_memory(*loaded) >> 20),
                static_cast<unsigned long long>(config::service_memory(*loaded) >> 20));
    if (catalog::reader_available()) // what a reader started here gets (docs/design.md)
        std::printf("%s: catalog sandbox: %s\n", path.c_str(), catalog::describe_catalog_sandbox().c_str());
    return 0;
}

} // namespace mirror::daemon
