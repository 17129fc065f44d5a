#include "daemon/cli/help_text.hpp"

namespace mirror::daemon {

namespace {

constexpr char const* locations = R"(ORIGIN and REPOSITORY are folder paths, file:///… URLs, https://… URLs or s3://BUCKET/PREFIX/;
MIRROR is a folder or s3://BUCKET/PREFIX/. S3 credentials, region and endpoint come from the
environment and ~/.aws as the AWS CLI reads them (AWS_PROFILE, AWS_ENDPOINT_URL, …).
)";

constexpr char const* sync_options = R"(sync options:
  --allow-rewind                 let branches move to versions that do not descend from the mirror's
  --concurrency N                transfers in flight, at most (default 4)
  --quick                        look only for new versions and moved refs: skip re-examining the
                                 versions the mirror has (late signatures and catalogs, expiry,
                                 rewritten tips); an unchanged https:// origin then costs 3 requests
  --max-refs N                   take at most N of the origin's refs, by name (default 10000); the
                                 rest are refused and reported
  --max-ref-name-length N        refuse ref names longer than N bytes (default 255)
  --memory-limit SIZE            DuckDB and buffers in flight stay within SIZE (default 48MiB)
  --deadline DURATION            cut the whole sync after DURATION (30s, 10m, 2h; exit 3): what
                                 was published stays, nothing half-copied is visible
  --ref PATTERN                  a partial mirror: follow only the refs PATTERN matches
                                 (refs/heads/main, refs/tags/v*, refs/heads/**; repeatable)
  --exclude-ref PATTERN          do not follow the refs PATTERN matches (repeatable)
  --head REF                     the ref HEAD names when the origin's is not followed
  --depth N                      shallow history: the newest N versions of each followed
                                 ref's line (a larger N later fetches the older ones)
)";

constexpr char const* verify_options = R"(verify options:
  --concurrency N                data files checked at once, at most (default 4; with --config,
                                 the repository's concurrency)
  --memory-limit SIZE            DuckDB and read buffers stay within SIZE (default 48MiB)
  --deadline DURATION            cut the whole audit after DURATION (30s, 10m, 2h; exit 3)
  --version ID                   audit that one version only (and the repository's own files)
  --without-key FINGERPRINT      show which versions would lose their trusted signature if that
                                 key were revoked (repeatable)
  --config FILE --repository NAME
                                 audit that repository of the daemon's configuration (its mirror,
                                 or with --origin its origin) with its keys, policy and store
                                 settings, instead of REPOSITORY and the options below
  --origin                       with --config: the origin rather than the mirror
  --full-digests                 print whole SHA-256 digests and every file examined (its size,
                                 digest and what vouches for it); --json always has them
  --attestation-signers FILE     first check the mirror's signed attestation against these keys:
                                 signature, expiry, and every ref and version.json as attested
  --max-age DURATION             refuse an attestation made longer ago (30m, 3h, 1d)
  --attestation-only             the attestation's check alone
  --attestation-namespace NS     the attestations' namespace (default fdl-mirror-attestation)
)";

constexpr char const* shared_options = R"(  --json                         print one JSON report instead of the summary
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
)";

constexpr char const* sync_exit = R"(exit status: 0 all mirrored and verified; 1 something was held back or refused;
2 usage error; 3 I/O failure.
)";

constexpr char const* verify_exit = R"(exit status: 0 every check passed; 1 a check failed; 2 usage error; 3 I/O failure.
)";

struct command_help {
    std::string_view name;
    std::string_view synopsis; ///< after "fdl-mirror "
    std::string_view summary;  ///< the one line of the overview (may wrap, indented)
    std::string_view text;     ///< what COMMAND --help adds after the synopsis
};

constexpr command_help commands[] = {
    {"sync", "sync ORIGIN MIRROR [options]", "make MIRROR a verified copy of the FDL repository at ORIGIN",
     "Copies what MIRROR lacks of the FDL repository at ORIGIN, checks every byte, size and\n"
     "signature on the way, and publishes each version whole (version.json last) and only once\n"
     "verified; refs move last. A rerun goes on where a stopped one ended."},
    {"verify", "verify REPOSITORY [options] | verify --config FILE --repository NAME [--origin]",
     "audit a repository (an origin or a mirror)",
     "Reads every version of REPOSITORY and checks what sync checks: sizes, SHA-256 digests,\n"
     "catalogs, signatures against --allowed-signers, refs. Writes nothing."},
    {"compare", "compare LOCATION LOCATION... [--json] [--max-lag N] [--attestation-signers FILE]",
     "compare copies of one repository (origins and mirrors, any store)",
     "Reads each LOCATION (from its attestation, when --attestation-signers accepts it and it\n"
     "has not expired; else from its records) and compares them: the same repository id,\n"
     "each ref's version in each, and every version held by more than one compared by its\n"
     "version.json. The same version id with other bytes is a divergence; a copy older on a\n"
     "ref's line is behind.\n"
     "  --max-lag N                    a copy more than N versions behind on a ref fails\n"
     "  --attestation-signers FILE     use a location's attestation signed by these keys\n"
     "  --attestation-namespace NS     the attestations' namespace (default fdl-mirror-attestation)\n"
     "  --concurrency N                version.json reads at once (default 4)\n"
     "  --memory-limit SIZE            read ledgers and attestations within SIZE (default 48MiB)\n"
     "  --json                         print one JSON report instead of the summary\n"
     "  --ca-bundle FILE               PEM certificates to trust for https:// instead of the system's\n"
     "  --allow-plain-http             accept http:// origins and S3 endpoints\n"
     "  --max-requests-per-second N    ask each location at most N times a second\n"
     "  --max-bytes-per-second SIZE    read each location at most SIZE a second\n"
     "  --allow-redirect-to HOST       an HTTP location may redirect to HOST (repeatable)\n"
     "exit status: 0 the copies agree; 1 a divergence, or lag past --max-lag; 2 usage error;\n"
     "3 a location cannot be read."},
    {"check-signature",
     "check-signature -f ALLOWED_SIGNERS -I PRINCIPAL -n NAMESPACE -s SIGNATURE_FILE\n"
     "           [--verify-time YYYYMMDD[HHMM[SS]][Z|UTC]] < MESSAGE",
     "verify an SSH signature as ssh-keygen -Y verify does",
     "Verifies SIGNATURE_FILE (SSHSIG) over standard input for PRINCIPAL in NAMESPACE, against\n"
     "the keys and options of ALLOWED_SIGNERS, at --verify-time (default: now).\n"
     "exit status: 0 the signature is accepted; 1 it is not, or a file cannot be read; 2 usage error."},
    {"find-principals", "find-principals -f ALLOWED_SIGNERS -s SIGNATURE_FILE [-n NAMESPACE] [--verify-time T]",
     "list the principals whose keys match the signature",
     "Prints, one a line, the principals of ALLOWED_SIGNERS whose key made SIGNATURE_FILE (and\n"
     "that allow NAMESPACE, when given) at the verify time.\n"
     "exit status: 0 one or more found; 1 none, or a file cannot be read; 2 usage error."},
    {"run", "run --config FILE [--web.config.file FILE] [--once --dry-run]",
     "run as a service: poll every configured repository, serve\n"
     "                                            /metrics; SIGHUP reloads, SIGTERM stops (docs/operations.md)",
     "The daemon: passes for every repository of the configuration FILE (fdl-mirror.yaml(5)),\n"
     "/metrics, /status, /healthz and /readyz on its listen address. SIGHUP reloads the\n"
     "configuration; SIGTERM and SIGINT stop it, letting copies in flight end.\n"
     "  --web.config.file FILE         TLS and basic authentication for the endpoints: the\n"
     "                                 exporter-toolkit web configuration (over web_config_file)\n"
     "  --once --dry-run               print what one pass of each repository would do (versions\n"
     "                                 to publish and their bytes, versions it would hold and why,\n"
     "                                 refs to create or move) and exit; writes nothing\n"
     "exit status: 0 after a stop; 78 configuration problems; 73 state_dir unusable or taken;\n"
     "69 the listen address cannot be bound. A dry run: 0 every repository planned, 1 one not."},
    {"check-config", "check-config --config FILE [--web.config.file FILE]",
     "validate the daemon's configuration (exit 78 when wrong)",
     "Checks FILE as the daemon would (the YAML, and the allowed_signers, ca_bundle,\n"
     "credentials_file and web configuration files it names), printing every problem; starts\n"
     "nothing.\n"
     "  --web.config.file FILE         check this web configuration, as `run` would take it\n"
     "exit status: 0 valid; 78 problems; 2 usage error."},
    {"status", "status --config FILE [--json] [--repository NAME]",
     "what the daemon's passes found: results, errors, lag,\n"
     "                                            held versions (exit 1 when one needs attention)",
     "Shows, from the daemon's state_dir, each repository's last pass (result, time, error),\n"
     "its refs (in sync, or behind since when), its held versions (id, reason, since when) and\n"
     "the next pass. The running daemon serves the same JSON on /status.\n"
     "  --json                         one JSON object instead of the text\n"
     "  --repository NAME              that repository only\n"
     "exit status: 0 nothing needs attention; 1 a last pass failed or versions are held;\n"
     "2 an unknown repository or usage error; 78 the configuration does not load."},
    {"trigger", "trigger --config FILE [--repository NAME] [--json]",
     "ask the running daemon for a pass now, whatever its wait\n"
     "                                            or backoff (POST /trigger)",
     "Asks the daemon running with the configuration FILE, on its listen address over loopback,\n"
     "for a pass now of every repository (or of NAME), bypassing the interval and the backoff,\n"
     "and prints for each when its pass started (or that one is running and the next follows\n"
     "it, or that another daemon holds its lease).\n"
     "Under a web_config_file it speaks TLS, trusting the daemon's own certificate, with the\n"
     "credentials of $FDL_MIRROR_WEB_USER and $FDL_MIRROR_WEB_PASSWORD and the client\n"
     "certificate of $FDL_MIRROR_WEB_CLIENT_CERT and $FDL_MIRROR_WEB_CLIENT_KEY.\n"
     "  --json                         the daemon's JSON answer instead of the text\n"
     "  --repository NAME              that repository only\n"
     "exit status: 0 every pass started or follows the one in hand; 1 one cannot start here\n"
     "(standing by, stopping); 2 an unknown repository or usage error; 69 no daemon answers;\n"
     "78 the configuration does not load, or the credentials it asks for are not set."},
    {"pause", "pause --config FILE --repository NAME [--reason TEXT]",
     "stop the passes of one repository on every daemon, kept\n"
     "                                            in its mirror until `resume` (no need to edit FILE)",
     "Writes .fdl-mirror/paused into the mirror of NAME (with the time, USER@HOST and TEXT).\n"
     "Every daemon mirroring it reads it before each pass and runs none while it is there; it\n"
     "shows in status and fdl_mirror_paused, and the shipped rules silence the repository's\n"
     "standing alerts. A daemon on this host is asked to look at once (POST /trigger).\n"
     "  --reason TEXT                  why, for the next person to read status\n"
     "exit status: 0 paused; 2 an unknown repository or usage error; 3 the mirror cannot be\n"
     "written; 78 the configuration does not load."},
    {"resume", "resume --config FILE --repository NAME",
     "lift the pause of one repository (`pause`)",
     "Deletes .fdl-mirror/paused from the mirror of NAME: passes run again, from each daemon's\n"
     "next poll (at once on this host's daemon, which is asked to look).\n"
     "exit status: 0 resumed (or was not paused); 2 an unknown repository or usage error; 3 the\n"
     "mirror cannot be written; 78 the configuration does not load."},
};

command_help const* find(std::string_view name) {
    for (auto const& c : commands)
        if (c.name == name)
            return &c;
    return nullptr;
}

} // namespace

std::vector<std::string_view> command_names() {
    std::vector<std::string_view> out;
    for (auto const& c : commands)
        out.push_back(c.name);
    return out;
}

std::string usage_text() {
    std::string out = "usage:\n";
    for (auto const& c : commands) {
        std::string line = "  fdl-mirror " + std::string(c.synopsis);
        // A synopsis of its own lines, or too long to share one with its summary.
        auto last_line = line.substr(line.rfind('\n') + 1);
        if (last_line.size() >= 44)
            line += "\n" + std::string(44, ' ');
        else
            line += std::string(44 - last_line.size(), ' ');
        out += line + std::string(c.summary) + "\n";
    }
    out += "  fdl-mirror COMMAND --help | --help | --version\n\n";
    out += locations;
    out += "\n";
    out += sync_options;
    out += verify_options;
    out += "sync and verify options:\n";
    out += shared_options;
    out += "\nexit status: 0 all mirrored and verified (or, for verify, every check passed; for\n"
           "check-signature, the signature is accepted); 1 something was held back or a check failed\n"
           "(the signature is not accepted); 2 usage error; 3 I/O failure.\n";
    return out;
}

std::string command_help_text(std::string_view command) {
    auto const* c = find(command);
    if (c == nullptr)
        return usage_text();
    std::string out = "usage: fdl-mirror " + std::string(c->synopsis) + "\n\n" + std::string(c->text) + "\n";
    if (command == "sync" || command == "verify") {
        out += "\n";
        out += locations;
        out += "\n";
        out += command == "sync" ? sync_options : verify_options;
        out += shared_options;
        out += "\n";
        out += command == "sync" ? sync_exit : verify_exit;
    }
    out += "\nMore in fdl-mirror(1) and docs/cli.md.\n";
    return out;
}

} // namespace mirror::daemon
