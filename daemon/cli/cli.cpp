#include "daemon/cli/cli.hpp"

#include "core/fdl/paths.hpp"
#include "core/fdl/ref_patterns.hpp"

#include "core/fdl/ids.hpp"

#include "config/units.hpp"

#include <algorithm>
#include <map>

namespace mirror::daemon {

namespace {

class arg_reader {
public:
    explicit arg_reader(std::vector<std::string> const& args) : args_(args) {}
    bool done() const { return next_ >= args_.size(); }
    std::string const& take() { return args_[next_++]; }
    std::optional<std::string> value_for(std::string const& flag, std::optional<usage_error>& problem) {
        if (done()) {
            problem = usage_error{flag + " needs a value"};
            return std::nullopt;
        }
        return take();
    }

private:
    std::vector<std::string> const& args_;
    std::size_t next_ = 0;
};

/// Handles a signature flag; returns false when `flag` is not one.
bool take_signature_flag(std::string const& flag, arg_reader& in, signature_options& out,
                         std::optional<usage_error>& problem) {
    if (flag == "--allowed-signers") {
        out.allowed_signers = in.value_for(flag, problem);
    } else if (flag == "--signatures") {
        if (auto value = in.value_for(flag, problem)) {
            out.policy = config::parse_signature_policy(*value);
            if (!out.policy)
                problem = usage_error{"--signatures: '" + *value + "' is not required, if-present or off"};
        }
    } else if (flag == "--namespace") {
        if (auto value = in.value_for(flag, problem)) {
            if (value->empty())
                problem = usage_error{"--namespace: empty"};
            out.ns = *value;
        }
    } else {
        return false;
    }
    return true;
}

/// --concurrency N of sync and verify: a count from 1 to 1024 (the daemon's bounds).
std::optional<std::size_t> take_concurrency(arg_reader& in, std::optional<usage_error>& problem) {
    auto value = in.value_for("--concurrency", problem);
    if (!value)
        return std::nullopt;
    auto n = config::parse_count(*value, 1024);
    if (!n)
        problem = usage_error{"--concurrency: '" + *value + "' is not a count from 1 to 1024"};
    return n;
}

/// Handles a network flag; returns false when `flag` is not one.
bool take_network_flag(std::string const& flag, arg_reader& in, network_options& out,
                       std::optional<usage_error>& problem) {
    if (flag == "--allow-plain-http") {
        out.allow_plain_http = true;
    } else if (flag == "--ca-bundle") {
        out.ca_bundle = in.value_for(flag, problem);
    } else if (flag == "--max-requests-per-second") {
        if (auto value = in.value_for(flag, problem)) {
            out.max_requests_per_second = config::parse_count(*value, 1'000'000);
            if (!out.max_requests_per_second)
                problem = usage_error{flag + ": '" + *value + "' is not a count from 1 to 1000000"};
        }
    } else if (flag == "--allow-redirect-to") {
        if (auto value = in.value_for(flag, problem)) {
            if (value->empty() || value->find_first_of("/@?# ") != std::string::npos)
                problem = usage_error{flag + ": '" + *value + "' is not a host or host:port"};
            else
                out.redirect_hosts.push_back(*value);
        }
    } else if (flag == "--max-bytes-per-second") {
        if (auto value = in.value_for(flag, problem)) {
            out.max_bytes_per_second = config::parse_size(*value);
            if (!out.max_bytes_per_second || *out.max_bytes_per_second == 0)
                problem = usage_error{flag + ": '" + *value + "' is not a size such as 100MiB, 10MB or 65536"};
        }
    } else {
        return false;
    }
    return true;
}

/// --memory-limit SIZE (sync, verify, compare): at least 16 MiB, DuckDB's floor.
void take_memory_limit(arg_reader& in, std::uint64_t& limit, std::optional<usage_error>& problem) {
    if (auto value = in.value_for("--memory-limit", problem)) {
        auto n = config::parse_size(*value);
        if (!n || *n < (std::uint64_t{16} << 20))
            problem = usage_error{"--memory-limit: '" + *value + "' is not a size of at least 16MiB"};
        else
            limit = *n;
    }
}

/// --deadline DURATION (sync, verify): a duration of at least a second.
void take_deadline(arg_reader& in, std::optional<std::chrono::milliseconds>& deadline,
                   std::optional<usage_error>& problem) {
    if (auto value = in.value_for("--deadline", problem)) {
        auto d = config::parse_duration(*value);
        if (!d || *d < std::chrono::seconds(1))
            problem = usage_error{"--deadline: '" + *value + "' is not a duration of at least 1s (30s, 10m, 2h)"};
        else
            deadline = *d;
    }
}

std::variant<command, usage_error> parse_sync(arg_reader& in) {
    sync_command cmd;
    std::vector<std::string> positional;
    std::optional<usage_error> problem;
    while (!in.done() && !problem) {
        std::string const& arg = in.take();
        if (take_signature_flag(arg, in, cmd.signatures, problem) || take_network_flag(arg, in, cmd.network, problem))
            continue;
        if (arg == "--allow-rewind") {
            cmd.allow_rewind = true;
        } else if (arg == "--json") {
            cmd.json = true;
        } else if (arg == "--quick") {
            cmd.quick = true;
        } else if (arg == "--concurrency") {
            if (auto n = take_concurrency(in, problem))
                cmd.concurrency = *n;
        } else if (arg == "--max-refs") {
            if (auto value = in.value_for(arg, problem)) {
                auto n = config::parse_count(*value, 1'000'000);
                if (!n)
                    problem = usage_error{"--max-refs: '" + *value + "' is not a count from 1 to 1000000"};
                else
                    cmd.max_refs = *n;
            }
        } else if (arg == "--max-ref-name-length") {
            if (auto value = in.value_for(arg, problem)) {
                auto n = config::parse_count(*value, 4096);
                if (!n)
                    problem = usage_error{"--max-ref-name-length: '" + *value + "' is not a count from 1 to 4096"};
                else
                    cmd.max_ref_name_length = *n;
            }
        } else if (arg == "--memory-limit") {
            take_memory_limit(in, cmd.memory_limit, problem);
        } else if (arg == "--deadline") {
            take_deadline(in, cmd.deadline, problem);
        } else if (arg == "--ref" || arg == "--exclude-ref") {
            if (auto value = in.value_for(arg, problem)) {
                if (auto pattern = fdl::ref_pattern::parse(*value); !pattern)
                    problem = usage_error{arg + ": " + pattern.error().message};
                else
                    (arg == "--ref" ? cmd.include_refs : cmd.exclude_refs).push_back(*value);
            }
        } else if (arg == "--depth") {
            if (auto value = in.value_for(arg, problem)) {
                auto n = config::parse_count(*value, 1'000'000);
                if (!n)
                    problem = usage_error{"--depth: '" + *value + "' is not a count from 1 to 1000000"};
                else
                    cmd.depth = *n;
            }
        } else if (arg == "--head") {
            if (auto value = in.value_for(arg, problem)) {
                if (auto why = fdl::ref_name_problem(*value); why || !fdl::is_mirrored_ref(*value))
                    problem = usage_error{"--head: '" + value->substr(0, 80) + "' is not a branch or tag name" +
                                          (why ? " (" + *why + ")" : std::string())};
                else
                    cmd.head = *value;
            }
        } else if (arg.starts_with("-")) {
            problem = usage_error{"sync: unknown option " + arg};
        } else {
            positional.push_back(arg);
        }
    }
    if (problem)
        return *problem;
    if (positional.size() != 2)
        return usage_error{"sync needs ORIGIN and MIRROR"};
    cmd.origin = positional[0];
    cmd.mirror = positional[1];
    return command(cmd);
}

std::variant<command, usage_error> parse_verify(arg_reader& in) {
    verify_command cmd;
    std::vector<std::string> positional;
    std::optional<usage_error> problem;
    std::optional<std::string> settings_flag; // a signature or network flag, which --config replaces
    while (!in.done() && !problem) {
        std::string const& arg = in.take();
        if (take_signature_flag(arg, in, cmd.signatures, problem) || take_network_flag(arg, in, cmd.network, problem)) {
            settings_flag = settings_flag.value_or(arg);
            continue;
        }
        if (arg == "--config")
            cmd.config = in.value_for(arg, problem);
        else if (arg == "--repository")
            cmd.configured_repository = in.value_for(arg, problem);
        else if (arg == "--origin")
            cmd.origin = true;
        else if (arg == "--json")
            cmd.json = true;
        else if (arg == "--full-digests")
            cmd.full_digests = true;
        else if (arg == "--concurrency")
            cmd.concurrency = take_concurrency(in, problem);
        else if (arg == "--memory-limit")
            take_memory_limit(in, cmd.memory_limit, problem);
        else if (arg == "--deadline")
            take_deadline(in, cmd.deadline, problem);
        else if (arg == "--version") {
            if (auto value = in.value_for(arg, problem)) {
                if (!fdl::is_version_id(*value))
                    problem = usage_error{"--version: '" + value->substr(0, 64) + "' is not a lower-case UUIDv7 version id"};
                cmd.only_version = *value;
            }
        } else if (arg == "--without-key") {
            if (auto value = in.value_for(arg, problem)) {
                if (!value->starts_with("SHA256:"))
                    problem = usage_error{"--without-key: '" + *value + "' is not a SHA256:… fingerprint"};
                cmd.without_keys.push_back(*value);
            }
        } else if (arg == "--attestation-signers") {
            cmd.attestation_signers = in.value_for(arg, problem);
        } else if (arg == "--attestation-namespace") {
            if (auto value = in.value_for(arg, problem))
                cmd.attestation_namespace = *value;
        } else if (arg == "--attestation-only") {
            cmd.attestation_only = true;
        } else if (arg == "--max-age") {
            if (auto value = in.value_for(arg, problem)) {
                auto d = config::parse_duration(*value);
                if (!d || *d < std::chrono::seconds(1))
                    problem = usage_error{"--max-age: '" + *value + "' is not a duration of at least 1s (30m, 2h, 1d)"};
                else
                    cmd.max_age = std::chrono::duration_cast<std::chrono::seconds>(*d);
            }
        } else if (arg.starts_with("-"))
            problem = usage_error{"verify: unknown option " + arg};
        else
            positional.push_back(arg);
    }
    if (problem)
        return *problem;
    if (!cmd.attestation_signers && (cmd.max_age || cmd.attestation_only))
        return usage_error{std::string(cmd.max_age ? "--max-age" : "--attestation-only") +
                           " needs --attestation-signers FILE"};
    if (cmd.config) {
        if (!cmd.configured_repository)
            return usage_error{"verify --config needs --repository NAME"};
        if (!positional.empty())
            return usage_error{"verify --config takes no REPOSITORY location: --repository NAME names it"};
        if (settings_flag)
            return usage_error{"verify --config: " + *settings_flag +
                               ": the keys, policy and store settings come from the configuration"};
        if (cmd.concurrency)
            return usage_error{"verify --config: --concurrency: the repository's concurrency comes from the "
                               "configuration"};
        return command(cmd);
    }
    if (cmd.configured_repository || cmd.origin)
        return usage_error{std::string(cmd.origin ? "--origin" : "--repository") + " needs --config FILE"};
    if (positional.size() != 1)
        return usage_error{"verify needs one REPOSITORY"};
    cmd.repository = positional[0];
    return command(cmd);
}

std::variant<command, usage_error> parse_compare(arg_reader& in) {
    compare_command cmd;
    std::optional<usage_error> problem;
    while (!in.done() && !problem) {
        std::string const& arg = in.take();
        if (take_network_flag(arg, in, cmd.network, problem))
            continue;
        if (arg == "--json") {
            cmd.json = true;
        } else if (arg == "--max-lag") {
            if (auto value = in.value_for(arg, problem)) {
                auto n = value->size() <= 9 && value->find_first_not_of("0123456789") == std::string::npos &&
                                 !value->empty()
                             ? std::optional<std::uint64_t>(std::stoull(*value))
                             : std::nullopt;
                if (!n)
                    problem = usage_error{"--max-lag: '" + value->substr(0, 32) + "' is not a count of versions (0 or more)"};
                else
                    cmd.max_lag = *n;
            }
        } else if (arg == "--attestation-signers") {
            cmd.attestation_signers = in.value_for(arg, problem);
        } else if (arg == "--attestation-namespace") {
            if (auto value = in.value_for(arg, problem))
                cmd.attestation_namespace = *value;
        } else if (arg == "--concurrency") {
            if (auto n = take_concurrency(in, problem))
                cmd.concurrency = *n;
        } else if (arg == "--memory-limit") {
            take_memory_limit(in, cmd.memory_limit, problem);
        } else if (arg.starts_with("-")) {
            problem = usage_error{"compare: unknown option " + arg};
        } else {
            cmd.locations.push_back(arg);
        }
    }
    if (problem)
        return *problem;
    if (cmd.locations.size() < 2)
        return usage_error{"compare needs two LOCATIONs or more"};
    return command(cmd);
}

/// Parses -f/-I/-n/-s/--verify-time flags into `fields`; anything else is a usage error.
std::optional<usage_error> parse_signature_flags(arg_reader& in, std::string const& command_name,
                                                 std::map<std::string, std::string>& fields) {
    std::optional<usage_error> problem;
    while (!in.done() && !problem) {
        std::string const& flag = in.take();
        if (flag != "-f" && flag != "-I" && flag != "-n" && flag != "-s" && flag != "--verify-time")
            return usage_error{command_name + ": unknown argument " + flag};
        if (auto value = in.value_for(flag, problem)) {
            if (fields.contains(flag))
                return usage_error{command_name + ": " + flag + " given twice"};
            fields[flag] = *value;
        }
    }
    return problem;
}

std::variant<command, usage_error> parse_check_signature(arg_reader& in) {
    std::map<std::string, std::string> fields;
    if (auto problem = parse_signature_flags(in, "check-signature", fields))
        return *problem;
    for (char const* needed : {"-f", "-I", "-n", "-s"})
        if (!fields.contains(needed))
            return usage_error{std::string("check-signature needs ") + needed};
    check_signature_command cmd{fields["-f"], fields["-I"], fields["-n"], fields["-s"], std::nullopt};
    if (fields.contains("--verify-time"))
        cmd.verify_time = fields["--verify-time"];
    return command(cmd);
}

std::variant<command, usage_error> parse_find_principals(arg_reader& in) {
    std::map<std::string, std::string> fields;
    if (auto problem = parse_signature_flags(in, "find-principals", fields))
        return *problem;
    if (fields.contains("-I"))
        return usage_error{"find-principals takes no -I"};
    for (char const* needed : {"-f", "-s"})
        if (!fields.contains(needed))
            return usage_error{std::string("find-principals needs ") + needed};
    find_principals_command cmd{fields["-f"], fields["-s"], std::nullopt, std::nullopt};
    if (fields.contains("-n"))
        cmd.ns = fields["-n"];
    if (fields.contains("--verify-time"))
        cmd.verify_time = fields["--verify-time"];
    return command(cmd);
}

/// The options of `check-config` and `run`: --config FILE and --web.config.file FILE;
/// `run` also --once and --dry-run.
struct config_options {
    std::string config;
    std::optional<std::string> web_config_file;
    bool once = false;
    bool dry_run = false;
};

std::variant<config_options, usage_error> parse_config_options(arg_reader& in, std::string const& name) {
    config_options out;
    std::optional<usage_error> problem;
    while (!in.done() && !problem) {
        std::string const& arg = in.take();
        if (arg == "--config") {
            if (auto value = in.value_for(arg, problem))
                out.config = *value;
        } else if (arg == "--web.config.file") {
            if (auto value = in.value_for(arg, problem))
                out.web_config_file = *value;
        } else if (name == "run" && arg == "--once") {
            out.once = true;
        } else if (name == "run" && arg == "--dry-run") {
            out.dry_run = true;
        } else {
            problem = usage_error{name + ": unexpected " + arg};
        }
    }
    if (problem)
        return *problem;
    if (out.config.empty())
        return usage_error{name + " needs --config FILE"};
    if (out.web_config_file && out.web_config_file->empty())
        return usage_error{name + ": --web.config.file needs a file"};
    return out;
}

std::variant<command, usage_error> parse_check_config(arg_reader& in) {
    auto options = parse_config_options(in, "check-config");
    if (auto const* problem = std::get_if<usage_error>(&options))
        return *problem;
    auto& given = std::get<config_options>(options);
    return command(check_config_command{given.config, given.web_config_file});
}

std::variant<command, usage_error> parse_run(arg_reader& in) {
    auto options = parse_config_options(in, "run");
    if (auto const* problem = std::get_if<usage_error>(&options))
        return *problem;
    auto& given = std::get<config_options>(options);
    if (given.dry_run != given.once)
        return usage_error{"run: --dry-run and --once go together (one pass of each repository, planned only)"};
    return command(run_command{given.config, given.web_config_file, given.dry_run});
}

/// The options of the commands that act on the daemon's repositories: --config FILE,
/// --repository NAME, and --json (status, trigger) or --reason TEXT (pause).
struct daemon_options {
    std::string config;
    std::optional<std::string> repository;
    bool json = false;
    std::optional<std::string> reason;
};

std::variant<daemon_options, usage_error> parse_daemon_options(arg_reader& in, std::string const& name,
                                                               bool takes_json, bool takes_reason) {
    daemon_options out;
    std::optional<usage_error> problem;
    while (!in.done() && !problem) {
        std::string const& arg = in.take();
        if (arg == "--config") {
            if (auto value = in.value_for(arg, problem))
                out.config = *value;
        } else if (arg == "--repository") {
            out.repository = in.value_for(arg, problem);
        } else if (arg == "--json" && takes_json) {
            out.json = true;
        } else if (arg == "--reason" && takes_reason) {
            out.reason = in.value_for(arg, problem);
        } else {
            problem = usage_error{name + ": unexpected " + arg};
        }
    }
    if (problem)
        return *problem;
    return out;
}

/// status and trigger: --config FILE [--repository NAME] [--json].
template <class Command>
std::variant<command, usage_error> parse_daemon_query(arg_reader& in, std::string const& name) {
    auto parsed = parse_daemon_options(in, name, true, false);
    if (auto const* problem = std::get_if<usage_error>(&parsed))
        return *problem;
    auto& options = std::get<daemon_options>(parsed);
    if (options.config.empty())
        return usage_error{name + " needs --config FILE"};
    Command cmd;
    cmd.config = std::move(options.config);
    cmd.repository = std::move(options.repository);
    cmd.json = options.json;
    return command(cmd);
}

/// pause: --config FILE --repository NAME [--reason TEXT]; resume without --reason.
std::variant<command, usage_error> parse_pause(arg_reader& in, bool resume) {
    std::string const name = resume ? "resume" : "pause";
    auto parsed = parse_daemon_options(in, name, false, !resume);
    if (auto const* problem = std::get_if<usage_error>(&parsed))
        return *problem;
    auto& options = std::get<daemon_options>(parsed);
    if (options.config.empty() || !options.repository)
        return usage_error{name + " needs --config FILE and --repository NAME"};
    return command(pause_command{std::move(options.config), std::move(*options.repository),
                                 options.reason.value_or(""), resume});
}

} // namespace

std::variant<command, usage_error> parse_command_line(std::vector<std::string> const& args) {
    if (args.empty())
        return usage_error{"no command given"};
    arg_reader in(args);
    std::string const& first = in.take();
    auto const names = command_names();
    bool const known = std::find(names.begin(), names.end(), first) != names.end();
    if (first == "--help" || first == "-h")
        return command(help_command{});
    if (first == "help") {
        if (in.done())
            return command(help_command{});
        std::string const& topic = in.take();
        if ((topic == "--help" || topic == "-h") && in.done())
            return command(help_command{});
        if (std::find(names.begin(), names.end(), topic) == names.end() || !in.done())
            return usage_error{"help: '" + topic + "' is not a command"};
        return command(help_command{topic});
    }
    // COMMAND --help (or -h) anywhere among its arguments, whatever else they say.
    if (known && std::any_of(args.begin() + 1, args.end(), [](auto const& a) { return a == "--help" || a == "-h"; }))
        return command(help_command{first});
    if (first == "--version")
        return command(version_command{});
    if (first == "sync")
        return parse_sync(in);
    if (first == "verify")
        return parse_verify(in);
    if (first == "compare")
        return parse_compare(in);
    if (first == "check-signature")
        return parse_check_signature(in);
    if (first == "find-principals")
        return parse_find_principals(in);
    if (first == "check-config")
        return parse_check_config(in);
    if (first == "run")
        return parse_run(in);
    if (first == "status")
        return parse_daemon_query<status_command>(in, "status");
    if (first == "trigger")
        return parse_daemon_query<trigger_command>(in, "trigger");
    if (first == "pause" || first == "resume")
        return parse_pause(in, first == "resume");
    return usage_error{"unknown command '" + first + "'"};
}

} // namespace mirror::daemon
