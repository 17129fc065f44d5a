#include "daemon/cli/cli.hpp"
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <variant>
#include <vector>

using namespace mirror::daemon;
using mirror::config::signature_policy;

namespace {

using args = std::vector<std::string>;

// The command parsed, by value (the variant is a temporary), or a failed check and nullopt.
template <class Command>
std::optional<Command> parsed_as(std::variant<command, usage_error> const& r) {
    if (auto const* e = std::get_if<usage_error>(&r)) {
        FAIL_CHECK("usage error: " << e->message);
        return std::nullopt;
    }
    auto const* c = std::get_if<Command>(&std::get<command>(r));
    CHECK(c != nullptr);
    if (c == nullptr)
        return std::nullopt;
    return *c;
}

// The usage error's message, or "" after a failed check.
std::string usage_message(std::variant<command, usage_error> const& r) {
    auto const* e = std::get_if<usage_error>(&r);
    CHECK(e != nullptr);
    if (e == nullptr)
        return "";
    CHECK_FALSE(e->message.empty());
    return e->message;
}

} // namespace

TEST_CASE("sync takes ORIGIN and MIRROR with defaults for everything else") {
    auto const cmd = parsed_as<sync_command>(parse_command_line({"sync", "/srv/origin", "file:///srv/mirror"}));
    REQUIRE(cmd.has_value());
    CHECK(cmd->origin == "/srv/origin");
    CHECK(cmd->mirror == "file:///srv/mirror");
    CHECK(cmd->concurrency == 4);
    CHECK(cmd->max_refs == 10'000);
    CHECK(cmd->max_ref_name_length == 255);
    CHECK_FALSE(cmd->allow_rewind);
    CHECK_FALSE(cmd->json);
    CHECK_FALSE(cmd->signatures.allowed_signers.has_value());
    CHECK_FALSE(cmd->signatures.policy.has_value());
    CHECK(cmd->signatures.ns == "fdl");
}

TEST_CASE("sync options, before, between or after the positionals") {
    auto const cmd = parsed_as<sync_command>(
        parse_command_line({"sync", "--json", "a", "--concurrency", "16", "b", "--allow-rewind", "--allowed-signers",
                            "/etc/keys", "--signatures", "if-present", "--namespace", "org.example"}));
    REQUIRE(cmd.has_value());
    CHECK(cmd->origin == "a"); // positionals keep their order
    CHECK(cmd->mirror == "b");
    CHECK(cmd->json);
    CHECK(cmd->allow_rewind);
    CHECK(cmd->concurrency == 16);
    CHECK(cmd->signatures.allowed_signers == std::optional<std::string>("/etc/keys"));
    CHECK(cmd->signatures.policy == signature_policy::if_present);
    CHECK(cmd->signatures.ns == "org.example");
}

TEST_CASE("sync needs exactly two positionals") {
    usage_message(parse_command_line({"sync"}));
    usage_message(parse_command_line({"sync", "a"}));
    usage_message(parse_command_line({"sync", "a", "b", "c"}));
    usage_message(parse_command_line({"sync", "--json", "a"}));
}

TEST_CASE("an unknown option is refused and named") {
    CHECK(usage_message(parse_command_line({"sync", "a", "b", "--frobnicate"})).find("--frobnicate") !=
          std::string::npos);
    CHECK(usage_message(parse_command_line({"verify", "r", "--allow-rewind"})).find("--allow-rewind") !=
          std::string::npos);
}

TEST_CASE("--max-refs and --max-ref-name-length take counts within their bounds") {
    auto const cmd = parsed_as<sync_command>(
        parse_command_line({"sync", "a", "b", "--max-refs", "1000000", "--max-ref-name-length", "4096"}));
    REQUIRE(cmd.has_value());
    CHECK(cmd->max_refs == 1'000'000);
    CHECK(cmd->max_ref_name_length == 4096);
    for (auto const& [flag, value] : {std::pair{"--max-refs", "0"}, std::pair{"--max-refs", "1000001"},
                                      std::pair{"--max-ref-name-length", "4097"},
                                      std::pair{"--max-ref-name-length", "x"}}) {
        CAPTURE(value);
        CHECK(usage_message(parse_command_line({"sync", "a", "b", flag, value})).find(flag) != std::string::npos);
    }
}

TEST_CASE("--allow-redirect-to is repeatable and takes hosts, not URLs") {
    auto const cmd = parsed_as<sync_command>(parse_command_line(
        {"sync", "a", "b", "--allow-redirect-to", "cdn.example.org", "--allow-redirect-to", "objects.example.net:8443"}));
    REQUIRE(cmd.has_value());
    CHECK(cmd->network.redirect_hosts == std::vector<std::string>{"cdn.example.org", "objects.example.net:8443"});
    for (char const* bad : {"https://cdn/", "user@cdn", "", "cdn/x"}) {
        CAPTURE(bad);
        CHECK(usage_message(parse_command_line({"sync", "a", "b", "--allow-redirect-to", bad}))
                  .find("--allow-redirect-to") != std::string::npos);
    }
}

TEST_CASE("--concurrency takes a count from 1 to 1024, for sync and verify alike") {
    for (char const* n : {"1", "1024", "8"}) {
        CAPTURE(n);
        auto const cmd = parsed_as<sync_command>(parse_command_line({"sync", "a", "b", "--concurrency", n}));
        REQUIRE(cmd.has_value());
        CHECK(cmd->concurrency == std::stoul(n));
        auto const audit = parsed_as<verify_command>(parse_command_line({"verify", "--concurrency", n, "r"}));
        REQUIRE(audit.has_value());
        CHECK(audit->concurrency == std::stoul(n));
    }
    for (char const* n : {"0", "-1", "1025", "1x", "", "four", "18446744073709551617", "+2"}) {
        CAPTURE(n);
        CHECK(usage_message(parse_command_line({"sync", "a", "b", "--concurrency", n})).find("--concurrency") !=
              std::string::npos);
        CHECK(usage_message(parse_command_line({"verify", "r", "--concurrency", n})).find("--concurrency") !=
              std::string::npos);
    }
    // A flag at the end with no value.
    CHECK(usage_message(parse_command_line({"sync", "a", "b", "--concurrency"})).find("--concurrency") !=
          std::string::npos);
    CHECK(usage_message(parse_command_line({"verify", "r", "--concurrency"})).find("--concurrency") !=
          std::string::npos);
    // Not given: sync's default, and verify's unset (the command's default, or the configuration's).
    CHECK(parsed_as<sync_command>(parse_command_line({"sync", "a", "b"}))->concurrency == default_concurrency);
    CHECK_FALSE(parsed_as<verify_command>(parse_command_line({"verify", "r"}))->concurrency);
    CHECK(command_help_text("verify").find("--concurrency") != std::string::npos);
}

TEST_CASE("--memory-limit takes a size of at least 16MiB, for sync and verify alike, 48MiB unless given") {
    constexpr std::uint64_t mib = 1024 * 1024;
    CHECK(parsed_as<sync_command>(parse_command_line({"sync", "a", "b"}))->memory_limit == 48 * mib);
    CHECK(parsed_as<verify_command>(parse_command_line({"verify", "r"}))->memory_limit == 48 * mib);
    auto const sync = parsed_as<sync_command>(parse_command_line({"sync", "a", "b", "--memory-limit", "1GiB"}));
    REQUIRE(sync.has_value());
    CHECK(sync->memory_limit == 1024 * mib);
    auto const audit = parsed_as<verify_command>(parse_command_line({"verify", "--memory-limit", "16MiB", "r"}));
    REQUIRE(audit.has_value());
    CHECK(audit->memory_limit == 16 * mib);
    for (char const* size : {"15MiB", "0", "lots", ""}) {
        CAPTURE(size);
        CHECK(usage_message(parse_command_line({"sync", "a", "b", "--memory-limit", size})).find("--memory-limit") !=
              std::string::npos);
        CHECK(usage_message(parse_command_line({"verify", "r", "--memory-limit", size})).find("--memory-limit") !=
              std::string::npos);
    }
    CHECK(command_help_text("verify").find("--memory-limit") != std::string::npos);
    CHECK(command_help_text("sync").find("--memory-limit") != std::string::npos);
}

TEST_CASE("signature options are checked") {
    CHECK(usage_message(parse_command_line({"sync", "a", "b", "--signatures", "always"})).find("always") !=
          std::string::npos);
    usage_message(parse_command_line({"sync", "a", "b", "--namespace", ""}));
    usage_message(parse_command_line({"verify", "r", "--allowed-signers"}));
    for (auto const* word : {"required", "if-present", "off"}) {
        auto const cmd = parsed_as<verify_command>(parse_command_line({"verify", "r", "--signatures", word}));
        REQUIRE(cmd.has_value());
        REQUIRE(cmd->signatures.policy.has_value());
        CHECK(to_string(*cmd->signatures.policy) == word);
    }
}

TEST_CASE("verify needs exactly one repository") {
    auto const cmd = parsed_as<verify_command>(parse_command_line({"verify", "/srv/mirror", "--json"}));
    REQUIRE(cmd.has_value());
    CHECK(cmd->repository == "/srv/mirror");
    CHECK(cmd->json);
    CHECK(cmd->signatures.ns == "fdl");

    usage_message(parse_command_line({"verify"}));
    usage_message(parse_command_line({"verify", "--json"}));
    usage_message(parse_command_line({"verify", "a", "b"}));
}

TEST_CASE("--help and --version") {
    for (auto const* word : {"--help", "-h", "help"}) {
        CAPTURE(word);
        parsed_as<help_command>(parse_command_line({word}));
    }
    parsed_as<version_command>(parse_command_line({"--version"}));
    std::string const usage = usage_text();
    for (auto const* mention : {"sync", "verify", "--concurrency", "--allow-rewind", "--signatures", "--namespace",
                                "--allowed-signers", "--json", "--help", "--version"}) {
        CAPTURE(mention);
        CHECK(usage.find(mention) != std::string::npos);
    }
}

TEST_CASE("every command takes --help and -h, anywhere among its arguments, and help COMMAND") {
    for (auto name : command_names()) {
        std::string const command(name);
        CAPTURE(command);
        for (auto const& line : {args{command, "--help"}, args{command, "-h"}, args{command, "--config", "x", "--help"},
                                 args{"help", command}}) {
            auto help = parsed_as<help_command>(parse_command_line(line));
            REQUIRE(help);
            CHECK(help->command == command);
        }
        auto text = command_help_text(command);
        CHECK(text.starts_with("usage: fdl-mirror " + command + " "));
        CHECK(text.find("exit status") != std::string::npos);
        CHECK(usage_text().find("fdl-mirror " + command + " ") != std::string::npos); // in the overview too
    }
    CHECK(command_help_text("sync").find("--allow-rewind") != std::string::npos);
    CHECK(command_help_text("sync").find("--without-key") == std::string::npos); // verify's own
    CHECK(command_help_text("verify").find("--without-key") != std::string::npos);
    CHECK(command_help_text("status").find("--repository NAME") != std::string::npos);
    CHECK(usage_message(parse_command_line(args{"help", "frobnicate"})).find("'frobnicate' is not a command") !=
          std::string::npos);
    CHECK(parsed_as<help_command>(parse_command_line(args{"help"}))->command.empty());
    for (char const* flag : {"--help", "-h"}) { // help's own --help is the overview
        auto help = parsed_as<help_command>(parse_command_line(args{"help", flag}));
        REQUIRE(help);
        CHECK(help->command.empty());
    }
}

TEST_CASE("no command, or an unknown one, is a usage error") {
    usage_message(parse_command_line({}));
    CHECK(usage_message(parse_command_line({"mirror", "a", "b"})).find("mirror") != std::string::npos);
    usage_message(parse_command_line({"--json"}));
    usage_message(parse_command_line({"SYNC", "a", "b"}));
}

TEST_CASE("a single-dash argument is an unknown option, not a location") {
    CHECK(usage_message(parse_command_line({"sync", "-x", "a", "b"})).find("-x") != std::string::npos);
    CHECK(usage_message(parse_command_line({"verify", "-q", "a"})).find("-q") != std::string::npos);
}

TEST_CASE("network options: --ca-bundle and --allow-plain-http, for sync and verify") {
    auto sync = parsed_as<sync_command>(
        parse_command_line(args{"sync", "https://example.org/lake/", "m", "--ca-bundle", "/etc/ca.pem"}));
    REQUIRE(sync);
    CHECK(sync->network.ca_bundle == "/etc/ca.pem");
    CHECK(!sync->network.allow_plain_http);
    auto verify = parsed_as<verify_command>(parse_command_line(args{"verify", "--allow-plain-http", "http://h/r/"}));
    REQUIRE(verify);
    CHECK(verify->network.allow_plain_http);
    CHECK(!verify->network.ca_bundle);
    CHECK(usage_message(parse_command_line(args{"sync", "o", "m", "--ca-bundle"})).find("--ca-bundle needs a value") !=
          std::string::npos);
}

TEST_CASE("rate limits and --quick: counts and sizes are read, anything else is a usage error") {
    auto sync = parsed_as<sync_command>(parse_command_line(
        args{"sync", "o", "m", "--quick", "--max-requests-per-second", "20", "--max-bytes-per-second", "100MiB"}));
    REQUIRE(sync);
    CHECK(sync->quick);
    CHECK(sync->network.max_requests_per_second == 20u);
    CHECK(sync->network.max_bytes_per_second == 100u * 1024 * 1024);
    auto plain = parsed_as<sync_command>(parse_command_line(args{"sync", "o", "m"}));
    REQUIRE(plain);
    CHECK(!plain->quick);
    CHECK(!plain->network.max_requests_per_second);
    CHECK(!plain->network.max_bytes_per_second);
    auto verify = parsed_as<verify_command>(parse_command_line(args{"verify", "r", "--max-bytes-per-second", "65536"}));
    REQUIRE(verify);
    CHECK(verify->network.max_bytes_per_second == 65536u);
    CHECK(usage_message(parse_command_line(args{"sync", "o", "m", "--max-requests-per-second", "0"}))
              .find("--max-requests-per-second: '0'") != std::string::npos);
    CHECK(usage_message(parse_command_line(args{"sync", "o", "m", "--max-bytes-per-second", "fast"}))
              .find("--max-bytes-per-second: 'fast'") != std::string::npos);
    CHECK(usage_message(parse_command_line(args{"sync", "o", "m", "--max-bytes-per-second", "0"}))
              .find("is not a size") != std::string::npos);
}

TEST_CASE("check-config takes --config FILE and nothing else") {
    auto cmd = parsed_as<check_config_command>(parse_command_line(args{"check-config", "--config", "/etc/f.yaml"}));
    REQUIRE(cmd);
    CHECK(cmd->config == "/etc/f.yaml");
    CHECK(usage_message(parse_command_line(args{"check-config"})).find("needs --config FILE") != std::string::npos);
    CHECK(usage_message(parse_command_line(args{"check-config", "--config"})).find("--config needs a value") !=
          std::string::npos);
    CHECK(usage_message(parse_command_line(args{"check-config", "--config", "a", "b"})).find("unexpected b") !=
          std::string::npos);
}

TEST_CASE("run takes --config FILE and nothing else") {
    auto cmd = parsed_as<run_command>(parse_command_line(args{"run", "--config", "/etc/fdl-mirror/config.yaml"}));
    REQUIRE(cmd);
    CHECK(cmd->config == "/etc/fdl-mirror/config.yaml");
    CHECK(usage_message(parse_command_line(args{"run"})).find("run needs --config FILE") != std::string::npos);
    CHECK(usage_message(parse_command_line(args{"run", "--config", "a", "--foreground"})).find("run: unexpected --foreground") !=
          std::string::npos);
}

TEST_CASE("status takes --config FILE, --json and --repository NAME") {
    auto cmd = parsed_as<status_command>(parse_command_line(args{"status", "--json", "--config", "c.yaml", "--repository", "population"}));
    REQUIRE(cmd);
    CHECK(cmd->config == "c.yaml");
    CHECK(cmd->json);
    CHECK(cmd->repository == "population");
    auto plain = parsed_as<status_command>(parse_command_line(args{"status", "--config", "c.yaml"}));
    REQUIRE(plain);
    CHECK_FALSE(plain->json);
    CHECK_FALSE(plain->repository);
    CHECK(usage_message(parse_command_line(args{"status"})).find("status needs --config FILE") != std::string::npos);
    CHECK(usage_message(parse_command_line(args{"status", "--config", "c", "--repository"})).find("--repository needs a value") !=
          std::string::npos);
    CHECK(usage_message(parse_command_line(args{"status", "--config", "c", "x"})).find("status: unexpected x") !=
          std::string::npos);
}

TEST_CASE("verify --config FILE --repository NAME [--origin] replaces the location, keys and store flags") {
    auto cmd = parsed_as<verify_command>(parse_command_line(args{"verify", "--config", "c.yaml", "--repository", "population", "--origin", "--json"}));
    REQUIRE(cmd);
    CHECK(cmd->config == "c.yaml");
    CHECK(cmd->configured_repository == "population");
    CHECK(cmd->origin);
    CHECK(cmd->json);
    CHECK(cmd->repository.empty());
    auto refused = [](args const& line) { return usage_message(parse_command_line(line)); };
    CHECK(refused({"verify", "--config", "c.yaml"}).find("needs --repository NAME") != std::string::npos);
    CHECK(refused({"verify", "--config", "c.yaml", "--repository", "p", "/srv/m"}).find("takes no REPOSITORY location") !=
          std::string::npos);
    CHECK(refused({"verify", "--config", "c.yaml", "--repository", "p", "--ca-bundle", "x.pem"}).find("--ca-bundle: the keys") !=
          std::string::npos);
    CHECK(refused({"verify", "--config", "c.yaml", "--repository", "p", "--signatures", "off"}).find("--signatures: the keys") !=
          std::string::npos);
    CHECK(refused({"verify", "--config", "c.yaml", "--repository", "p", "--concurrency", "2"})
              .find("--concurrency: the repository's concurrency comes from the configuration") != std::string::npos);
    CHECK(refused({"verify", "/srv/m", "--origin"}).find("--origin needs --config FILE") != std::string::npos);
    CHECK(refused({"verify", "/srv/m", "--repository", "p"}).find("--repository needs --config FILE") != std::string::npos);
}
