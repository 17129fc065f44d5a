// fdl-mirror: startup in a straight line. Parse the command line, open the stores, run
// one command on one io_context thread, print its report, exit with its status.

#include "daemon/build_info.hpp"
#include "daemon/cli/check_config.hpp"
#include "daemon/cli/cli.hpp"
#include "daemon/cli/attestation_check.hpp"
#include "daemon/cli/compare_command.hpp"
#include "daemon/cli/dry_run.hpp"
#include "daemon/cli/configured_audit.hpp"
#include "daemon/state/mirror_lock.hpp"
#include "daemon/service/pass_setup.hpp"
#include "daemon/cli/progress.hpp"
#include "daemon/cli/report_output.hpp"
#include "daemon/service/service.hpp"
#include "daemon/cli/signature_commands.hpp"
#include "daemon/cli/status_command.hpp"
#include "daemon/cli/pause_command.hpp"
#include "daemon/cli/trigger_command.hpp"
#include "daemon/cli/sync_lease.hpp"
#include "daemon/common/terminal_text.hpp"

#include "config/units.hpp"
#include "core/catalog/catalog_worker.hpp"
#include "core/catalog/sandbox.hpp"
#include "core/io/cuttable.hpp"
#include "core/io/errors.hpp"
#include "core/store/fault_store.hpp"
#include "core/store/open_store.hpp"
#include "core/sync/audit.hpp"
#include "core/sync/sync_pass.hpp"
#include "verify/allowed_signers.hpp"
#include "verify/signature_policy.hpp"
#include "verify/sshsig.hpp"

#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>

namespace {

using namespace mirror;

constexpr int exit_usage = 2;
constexpr int exit_io = 3;

/// Runs one coroutine to completion on `io` (which outlives the stores) and returns its
/// value; nullopt when `deadline` passed first and cut it (as the daemon cuts a pass: the
/// object in hand is finished or left unpublished, never half visible).
template <class T>
std::optional<T> run_within(net::io_context& io, awaitable<T> work, std::optional<std::chrono::milliseconds> deadline) {
    net::cancellation_signal cutter;
    std::optional<io::cuttable_end<T>> end;
    net::co_spawn(io, io::run_cuttable(io.get_executor(), std::move(work), cutter, deadline),
                  [&](std::exception_ptr, io::cuttable_end<T> ended) { end.emplace(std::move(ended)); });
    io.restart(); // the context may have run other work before (verify's attestation check)
    io.run();
    if (end->limit_reached)
        return std::nullopt;
    if (end->failure)
        std::rethrow_exception(end->failure); // a bug: main reports it and exits non-zero
    return std::move(end->value);
}

/// What a command cut at its --deadline says, and its exit status.
int cut_at_deadline(std::string const& command, std::chrono::milliseconds deadline) {
    daemon::print_error(command + ": cut at its --deadline of " + config::format_duration(deadline) +
                        ": what was published stays, nothing half-copied is visible; run it again to go on");
    return exit_io;
}

/// Builds an origin's signature settings from the command line: the keys are read and
/// parsed now, so that a file that cannot be read is a usage error before anything runs.
std::variant<verify::trust_settings, std::string> load_trust(daemon::signature_options const& s) {
    verify::trust_settings trust;
    trust.ns = s.ns;
    auto policy = s.policy.value_or(s.allowed_signers ? config::signature_policy::required
                                                      : config::signature_policy::off);
    switch (policy) {
    case config::signature_policy::required: trust.policy = verify::signature_policy::required; break;
    case config::signature_policy::if_present: trust.policy = verify::signature_policy::if_present; break;
    case config::signature_policy::off: trust.policy = verify::signature_policy::off; break;
    }
    if (!s.allowed_signers) {
        if (policy != config::signature_policy::off)
            return "--signatures " + std::string(config::to_string(policy)) + " needs --allowed-signers";
        if (!s.policy) // chosen for the operator, who should know
            std::fputs("warning: no --allowed-signers given: signatures are not checked\n", stderr);
        return trust;
    }
    std::error_code ec;
    if (!std::filesystem::exists(*s.allowed_signers, ec))
        return "--allowed-signers: " + *s.allowed_signers + ": does not exist";
    if (!std::filesystem::is_regular_file(*s.allowed_signers, ec))
        return "--allowed-signers: " + *s.allowed_signers + ": cannot be read (not a file)";
    std::ifstream in(*s.allowed_signers, std::ios::binary);
    if (!in.is_open())
        return "--allowed-signers: " + *s.allowed_signers + ": cannot be read";
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad())
        return "--allowed-signers: " + *s.allowed_signers + ": cannot be read";
    auto signers = verify::parse_allowed_signers(text, *s.allowed_signers);
    if (!signers)
        return "--allowed-signers: " + signers.error().message;
    trust.signers = std::move(*signers);
    return trust;
}

/// A location that cannot name a store (a scheme not built, file://relative) is the
/// operator's mistake (exit 2); one that names a store that cannot be opened is I/O (3).
bool is_usage_problem(error const& e) {
    return e.code == io::store_errc::unsupported || e.code == io::store_errc::rejected ||
           e.code == io::store_errc::not_a_file; // a location that is not a folder
}

/// FDL_MIRROR_TEST_KILL_AFTER_WRITES=N: die by SIGKILL right after the N-th write to the
/// mirror. For crash-consistency tests only.
std::optional<std::uint64_t> kill_after_writes() {
    char const* text = std::getenv("FDL_MIRROR_TEST_KILL_AFTER_WRITES");
    if (text == nullptr)
        return std::nullopt;
    auto n = config::parse_count(text, UINT64_MAX);
    if (!n)
        std::fprintf(stderr, "warning: FDL_MIRROR_TEST_KILL_AFTER_WRITES='%s' is not a count; ignored\n", text);
    return n;
}

store::store_options store_options_of(daemon::network_options const& network) {
    store::store_options out;
    out.allow_plain_http = network.allow_plain_http;
    if (network.ca_bundle)
        out.ca_bundle = *network.ca_bundle;
    return out;
}

/// The options for the origin: the network's, held to the rate limits asked for.
store::store_options origin_options_of(daemon::network_options const& network) {
    store::store_options out = store_options_of(network);
    out.redirect_hosts = network.redirect_hosts;
    store::rate_limits limits;
    if (network.max_requests_per_second)
        limits.requests_per_second = static_cast<double>(*network.max_requests_per_second);
    limits.bytes_per_second = network.max_bytes_per_second;
    if (limits.any())
        out.limits = std::make_shared<store::throttle>(limits);
    return out;
}

int run_sync_command(daemon::sync_command const& cmd) {
    auto trust = load_trust(cmd.signatures);
    if (auto const* problem = std::get_if<std::string>(&trust)) {
        daemon::print_error(*problem);
        return exit_usage;
    }
    // The I/O thread's context and the threads for blocking file I/O: declared before the
    // stores that use them (an HTTP store keeps connections), so destroyed after them.
    net::io_context io(1);
    io::blocking_pool pool(std::clamp<std::size_t>(cmd.concurrency, 2, 8));
    auto const memory_shares = daemon::split_memory_limit(cmd.memory_limit);
    io::memory_budget memory(memory_shares.transfers);
    auto network = store_options_of(cmd.network);
    network.memory = &memory;
    auto origin_options = origin_options_of(cmd.network);
    origin_options.memory = &memory;
    auto origin = store::open_store(cmd.origin, store::store_role::origin, &pool, origin_options);
    if (!origin) {
        daemon::print_error("origin: " + origin.error().message);
        return is_usage_problem(origin.error()) ? exit_usage : exit_io;
    }
    auto mirror = store::open_store(cmd.mirror, store::store_role::mirror, &pool, network);
    if (!mirror) {
        daemon::print_error("mirror: " + mirror.error().message);
        return is_usage_problem(mirror.error()) ? exit_usage : exit_io;
    }
    store::store* target = mirror->get();
    std::optional<store::fault_store> killer;
    if (auto n = kill_after_writes()) {
        killer.emplace(*target, *n, store::fault_action::kill);
        target = &*killer;
    }
    auto progress = cmd.json ? nullptr : daemon::tty_progress::create();
    sync::sync_options options{cmd.allow_rewind, cmd.concurrency, &pool,
                               std::move(std::get<verify::trust_settings>(trust))};
    options.recheck_published = !cmd.quick;
    options.refs = {cmd.max_refs, cmd.max_ref_name_length};
    options.memory = &memory;
    options.catalogs.memory_limit = daemon::duckdb_memory_limit(memory_shares.duckdb);
    for (auto const& text : cmd.include_refs)
        options.partial.follow.include.push_back(*fdl::ref_pattern::parse(text)); // checked by the parser
    for (auto const& text : cmd.exclude_refs)
        options.partial.follow.exclude.push_back(*fdl::ref_pattern::parse(text));
    options.partial.head = cmd.head;
    options.partial.depth = cmd.depth;
    // One pass at a time per folder mirror; the lock lives until the pass is over. Taken
    // once the mirror is known to hold this repository: another one gets nothing written.
    std::optional<daemon::mirror_lock> lock;
    options.before_first_write = daemon::folder_lock_step(cmd.mirror, lock);
    // Into S3, the pass holds the repository's lease, as the daemons' passes do.
    auto finished = run_within(io, daemon::sync_holding_lease(**origin, **mirror, *target, options, progress.get()),
                               cmd.deadline);
    progress.reset();
    if (!finished)
        return cut_at_deadline("sync", *cmd.deadline);
    auto& report = *finished;
    std::string out = cmd.json ? daemon::sync_json(report, cmd.origin, cmd.mirror)
                               : daemon::sync_summary(report, cmd.origin, cmd.mirror);
    std::fwrite(out.data(), 1, out.size(), stdout);
    return report.exit_code();
}

/// Takes the manifest entries a report will not print: the summary without --full-digests.
class dropped_manifest final : public sync::manifest_sink {
public:
    bool take(std::string const&, std::vector<sync::audited_file> const&) override { return true; }
};

int run_verify_command(daemon::verify_command const& cmd) {
    // What to audit, and how: from the command line, or from the daemon's configuration.
    daemon::configured_audit audit;
    if (cmd.config) {
        auto configured = daemon::configured_audit_of(cmd);
        if (auto const* status = std::get_if<int>(&configured))
            return *status;
        audit = std::move(std::get<daemon::configured_audit>(configured));
    } else {
        auto trust = load_trust(cmd.signatures);
        if (auto const* problem = std::get_if<std::string>(&trust)) {
            daemon::print_error(*problem);
            return exit_usage;
        }
        audit = {cmd.repository, origin_options_of(cmd.network), std::move(std::get<verify::trust_settings>(trust)),
                 cmd.signatures.allowed_signers, cmd.concurrency.value_or(daemon::default_concurrency)};
    }
    daemon::audit_setup setup{audit.location, audit.trust.policy, audit.trust.ns};
    setup.tool = daemon::this_build();
    setup.full_digests = cmd.full_digests;
    if (audit.allowed_signers) {
        // The report names the keys by the sha256 of the exact bytes they come from: the file
        // is read once more, and the keys parsed from these bytes replace the first ones, so
        // a file replaced in between cannot be named by another file's digest.
        std::ifstream in(*audit.allowed_signers, std::ios::binary);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        auto signers = verify::parse_allowed_signers(text, *audit.allowed_signers);
        if (!in.is_open() || in.bad() || !signers) {
            daemon::print_error("allowed_signers: " + (signers ? *audit.allowed_signers + ": cannot be read again"
                                                               : signers.error().message));
            return cmd.config ? daemon::exit_config : exit_usage;
        }
        audit.trust.signers = std::move(*signers);
        setup.allowed_signers = audit.allowed_signers;
        setup.allowed_signers_sha256 = verify::sha256_of(text);
    }
    net::io_context io(1);
    // As for sync: a thread for each check in flight that reads a folder, within 2..8.
    io::blocking_pool pool(std::clamp<std::size_t>(audit.concurrency, 2, 8));
    // As for sync: one budget, which the reads of many checks at once draw on.
    auto const memory_shares = daemon::split_memory_limit(cmd.memory_limit);
    io::memory_budget memory(memory_shares.transfers);
    audit.options.memory = &memory;
    auto repo = store::open_store(audit.location, store::store_role::origin, &pool, audit.options);
    if (!repo) {
        daemon::print_error(repo.error().message);
        return is_usage_problem(repo.error()) ? exit_usage : exit_io;
    }
    if (cmd.attestation_signers) {
        // The attestation first: a consumer may want nothing else (--attestation-only).
        daemon::attestation_request request{*cmd.attestation_signers, cmd.attestation_namespace, cmd.max_age,
                                            audit.concurrency, attest::attestation_limit(memory.capacity())};
        auto attested = daemon::check_attestation_of(io, **repo, request);
        if (attested.status == 2) {
            daemon::print_error(attested.summary.substr(0, attested.summary.size() - 1));
            return exit_usage;
        }
        int const status = attested.status == 3 ? exit_io : attested.status;
        if (cmd.attestation_only) {
            std::string out =
                cmd.json ? "{\"command\":\"verify\",\"repository\":" +
                               boost::json::serialize(boost::json::value(daemon::shown_location(audit.location))) +
                               ",\"exit_code\":" + std::to_string(status) + ",\"attestation\":" + attested.json +
                               ",\"peak_rss_bytes\":" + std::to_string(daemon::peak_rss_bytes()) + "}\n"
                         : daemon::terminal_safe("verify " + daemon::shown_location(audit.location) + "\n" +
                                                     attested.summary,
                                                 true);
            std::fwrite(out.data(), 1, out.size(), stdout);
            return status;
        }
        setup.attestation_summary = attested.summary;
        setup.attestation_json = attested.json;
        setup.attestation_status = status;
    }
    auto progress = cmd.json ? nullptr : daemon::tty_progress::create();
    sync::audit_options options{std::move(audit.trust), cmd.without_keys};
    options.only_version = cmd.only_version;
    options.concurrency = audit.concurrency;
    options.catalogs.memory_limit = daemon::duckdb_memory_limit(memory_shares.duckdb);
    // One version at a time, each within half of what is left for data in flight, as sync.
    options.version_memory = std::max<std::uint64_t>(memory_shares.transfers / 2, std::uint64_t{4} << 20);
    // The data files' manifest entries leave memory as each version is checked: to a
    // temporary file when the report prints them, nowhere when it does not.
    dropped_manifest dropped;
    std::unique_ptr<daemon::manifest_spill> spill;
    if (cmd.json || cmd.full_digests) {
        std::string problem;
        spill = cmd.json ? daemon::manifest_spill::create(daemon::manifest_entry_json, ",", problem)
                         : daemon::manifest_spill::create(daemon::manifest_entry_line, "", problem);
        if (!spill)
            daemon::print_error("warning: " + problem + "; the report's manifest is held in memory");
        options.data_manifest = spill.get();
    } else {
        options.data_manifest = &dropped;
    }
    auto finished = run_within(io, sync::run_audit(**repo, progress.get(), &pool, std::move(options)), cmd.deadline);
    progress.reset();
    if (!finished)
        return cut_at_deadline("verify", *cmd.deadline);
    auto& report = *finished;
    auto to_stdout = [](std::string_view piece) { std::fwrite(piece.data(), 1, piece.size(), stdout); };
    std::string problem;
    bool written = cmd.json ? daemon::write_audit_json(report, setup, spill.get(), to_stdout, problem)
                            : daemon::write_audit_summary(report, setup, spill.get(), to_stdout, problem);
    if (!written) {
        std::fflush(stdout);
        daemon::print_error(problem);
        return exit_io;
    }
    return std::max(report.exit_code(), setup.attestation_status);
}

std::string version_text() {
    return std::string("fdl-mirror ") + FDL_MIRROR_VERSION +
           "\n"
           "stores: folder (file://), http(s):// origins (read-only; TLS verified), s3:// (SigV4; AWS or a custom "
           "endpoint)\n"
#ifdef FDL_MIRROR_HAVE_DUCKDB
           "catalog reader: DuckDB's C library; each version's frozen catalog names its data files and is "
           "checked against version.json, files.json and catalogs/*\n"
           "catalog sandbox: " + catalog::describe_catalog_sandbox() + "\n"
#else
           "catalog reader: none in this build (built without DuckDB): data files are taken from files.json, "
           "and catalogs are not checked\n"
#endif
           "signatures: SSHSIG verified with libssh " + verify::libssh_version() +
           "; certificates and security keys (sk-) checked with OpenSSL; DSA keys refused\n";
}

} // namespace

int main(int argc, char** argv) {
    // This program is also its own sandboxed catalog reader: then it does nothing else.
    if (auto served = catalog::serve_catalog_worker_if_asked(argc, argv))
        return *served;
    std::vector<std::string> args(argv + 1, argv + argc);
    auto parsed = daemon::parse_command_line(args);
    if (auto const* problem = std::get_if<daemon::usage_error>(&parsed)) {
        daemon::print_error(problem->message + "\n");
        std::fputs(daemon::usage_text().c_str(), stderr);
        return exit_usage;
    }
    try {
        auto const& cmd = std::get<daemon::command>(parsed);
        if (auto const* h = std::get_if<daemon::help_command>(&cmd)) {
            auto text = h->command.empty() ? daemon::usage_text() : daemon::command_help_text(h->command);
            std::fputs(text.c_str(), stdout);
            return 0;
        }
        if (std::holds_alternative<daemon::version_command>(cmd)) {
            std::fputs(version_text().c_str(), stdout);
            return 0;
        }
        if (auto const* s = std::get_if<daemon::sync_command>(&cmd))
            return run_sync_command(*s);
        if (auto const* c = std::get_if<daemon::check_signature_command>(&cmd))
            return daemon::run_check_signature(*c);
        if (auto const* f = std::get_if<daemon::find_principals_command>(&cmd))
            return daemon::run_find_principals(*f);
        if (auto const* c = std::get_if<daemon::check_config_command>(&cmd))
            return daemon::run_check_config(c->config, c->web_config_file);
        if (auto const* r = std::get_if<daemon::run_command>(&cmd))
            return r->dry_run ? daemon::run_dry(r->config) : daemon::run_service(r->config, r->web_config_file);
        if (auto const* s = std::get_if<daemon::status_command>(&cmd))
            return daemon::run_status(*s);
        if (auto const* t = std::get_if<daemon::trigger_command>(&cmd))
            return daemon::run_trigger(*t);
        if (auto const* p = std::get_if<daemon::pause_command>(&cmd))
            return daemon::run_pause(*p);
        if (auto const* c = std::get_if<daemon::compare_command>(&cmd))
            return daemon::run_compare(*c, origin_options_of(c->network));
        return run_verify_command(std::get<daemon::verify_command>(cmd));
    } catch (std::exception const& e) {
        std::fprintf(stderr, "fdl-mirror: internal error: %s\n", e.what());
        return 70; // EX_SOFTWARE: a bug, not bad input
    }
}
