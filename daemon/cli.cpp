#include "daemon/cli.hpp"

#include "config/units.hpp"

#include <map>

namespace mirror::daemon {

std::string usage_text() {
    return R"(usage:
  fdl-mirror sync ORIGIN MIRROR [options]   make MIRROR a verified copy of the FDL repository at ORIGIN
  fdl-mirror verify REPOSITORY [options]    audit a repository (an origin or a mirror)
  fdl-mirror check-signature -f ALLOWED_SIGNERS -I PRINCIPAL -n NAMESPACE -s SIGNATURE_FILE
             [--verify-time YYYYMMDD[HHMM[SS]][Z|UTC]] < MESSAGE
                                            verify an SSH signature as ssh-keygen -Y verify does
  fdl-mirror find-principals -f ALLOWED_SIGNERS -s SIGNATURE_FILE [-n NAMESPACE] [--verify-time T]
                                            list the principals whose keys match the signature
  fdl-mirror run --config FILE              run as a service: poll every configured repository, serve
                                            /metrics; SIGHUP reloads, SIGTERM stops (docs/operations.md)
  fdl-mirror check-config --config FILE     validate the daemon's configuration (exit 78 when wrong)
  fdl-mirror status --config FILE [--json] [--repository NAME]
                                            what the daemon's passes found: results, errors, lag,
                                            held versions (exit 1 when one needs attention)
  fdl-mirror --help | --version

ORIGIN and REPOSITORY are folder paths, file:///… URLs, https://… URLs or s3://BUCKET/PREFIX/;
MIRROR is a folder or s3://BUCKET/PREFIX/. S3 credentials, region and endpoint come from the
environment and ~/.aws as the AWS CLI reads them (AWS_PROFILE, AWS_ENDPOINT_URL, …).

sync options:
  --allow-rewind                 let branches move to versions that do not descend from the mirror's
  --concurrency N                transfers in flight, at most (default 4)
  --quick                        look only for new versions and moved refs: skip re-examining the
                                 versions the mirror has (late signatures and catalogs, expiry,
                                 rewritten tips); an unchanged https:// origin then costs 3 requests
  --max-refs N                   take at most N of the origin's refs, by name (default 10000); the
                                 rest are refused and reported
  --max-ref-name-length N        refuse ref names longer than N bytes (default 255)
verify options:
  --without-key FINGERPRINT      show which versions would lose their trusted signature if that
                                 key were revoked (repeatable)
sync and verify options:
  --json                         print one JSON report instead of the summary
  --allowed-signers FILE         OpenSSH allowed_signers file of trusted keys
  --signatures POLICY            required | if-present | off (default: required with keys, else off)
  --namespace NS                 signature namespace (default fdl)
  --ca-bundle FILE               PEM certificates to trust for https:// instead of the system's
  --allow-plain-http             accept http:// origins and S3 endpoints (nothing protects their
                                 bytes, or S3 credentials, in transit)
  --max-requests-per-second N    ask the origin (the repository, for verify) at most N times a
                                 second, after a burst of N
  --max-bytes-per-second SIZE    read at most SIZE a second from it (100MiB, 10MB, 65536)
  --allow-redirect-to HOST       let an https:// origin's redirects lead to HOST (or HOST:PORT), on
                                 public addresses only (repeatable; by default a redirect may
                                 only stay on the origin's own scheme, host and port)

exit status: 0 all mirrored and verified (or, for verify, every check passed; for
check-signature, the signature is accepted); 1 something was held back or a check failed
(the signature is not accepted); 2 usage error; 3 I/O failure.
)";
}

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
            if (auto value = in.value_for(arg, problem)) {
                auto n = config::parse_count(*value, 1024);
                if (!n)
                    problem = usage_error{"--concurrency: '" + *value + "' is not a count from 1 to 1024"};
                else
                    cmd.concurrency = *n;
            }
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
    while (!in.done() && !problem) {
        std::string const& arg = in.take();
        if (take_signature_flag(arg, in, cmd.signatures, problem) || take_network_flag(arg, in, cmd.network, problem))
            continue;
        if (arg == "--json")
            cmd.json = true;
        else if (arg == "--without-key") {
            if (auto value = in.value_for(arg, problem)) {
                if (!value->starts_with("SHA256:"))
                    problem = usage_error{"--without-key: '" + *value + "' is not a SHA256:… fingerprint"};
                cmd.without_keys.push_back(*value);
            }
        } else if (arg.starts_with("-"))
            problem = usage_error{"verify: unknown option " + arg};
        else
            positional.push_back(arg);
    }
    if (problem)
        return *problem;
    if (positional.size() != 1)
        return usage_error{"verify needs one REPOSITORY"};
    cmd.repository = positional[0];
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

/// The --config FILE of `check-config` and `run`, their only option.
std::variant<std::string, usage_error> parse_config_option(arg_reader& in, std::string const& name) {
    std::string config;
    std::optional<usage_error> problem;
    while (!in.done() && !problem) {
        std::string const& arg = in.take();
        if (arg == "--config") {
            if (auto value = in.value_for(arg, problem))
                config = *value;
        } else {
            problem = usage_error{name + ": unexpected " + arg};
        }
    }
    if (problem)
        return *problem;
    if (config.empty())
        return usage_error{name + " needs --config FILE"};
    return config;
}

std::variant<command, usage_error> parse_check_config(arg_reader& in) {
    auto config = parse_config_option(in, "check-config");
    if (auto const* problem = std::get_if<usage_error>(&config))
        return *problem;
    return command(check_config_command{std::get<std::string>(config)});
}

std::variant<command, usage_error> parse_run(arg_reader& in) {
    auto config = parse_config_option(in, "run");
    if (auto const* problem = std::get_if<usage_error>(&config))
        return *problem;
    return command(run_command{std::get<std::string>(config)});
}

std::variant<command, usage_error> parse_status(arg_reader& in) {
    status_command cmd;
    std::optional<usage_error> problem;
    while (!in.done() && !problem) {
        std::string const& arg = in.take();
        if (arg == "--config") {
            if (auto value = in.value_for(arg, problem))
                cmd.config = *value;
        } else if (arg == "--repository") {
            cmd.repository = in.value_for(arg, problem);
        } else if (arg == "--json") {
            cmd.json = true;
        } else {
            problem = usage_error{"status: unexpected " + arg};
        }
    }
    if (problem)
        return *problem;
    if (cmd.config.empty())
        return usage_error{"status needs --config FILE"};
    return command(cmd);
}

} // namespace

std::variant<command, usage_error> parse_command_line(std::vector<std::string> const& args) {
    if (args.empty())
        return usage_error{"no command given"};
    arg_reader in(args);
    std::string const& first = in.take();
    if (first == "--help" || first == "-h" || first == "help")
        return command(help_command{});
    if (first == "--version")
        return command(version_command{});
    if (first == "sync")
        return parse_sync(in);
    if (first == "verify")
        return parse_verify(in);
    if (first == "check-signature")
        return parse_check_signature(in);
    if (first == "find-principals")
        return parse_find_principals(in);
    if (first == "check-config")
        return parse_check_config(in);
    if (first == "run")
        return parse_run(in);
    if (first == "status")
        return parse_status(in);
    return usage_error{"unknown command '" + first + "'"};
}

} // namespace mirror::daemon
