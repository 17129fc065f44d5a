#include "daemon/cli/dry_run.hpp"

#include "daemon/cli/check_config.hpp"
#include "daemon/cli/report_output.hpp"
#include "daemon/common/terminal_text.hpp"
#include "daemon/service/pass_setup.hpp"

#include "core/io/blocking_pool.hpp"
#include "core/io/errors.hpp"
#include "core/store/forwarding_store.hpp"
#include "core/store/open_store.hpp"
#include "core/sync/sync_pass.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <cstdio>
#include <filesystem>
#include <set>
#include <system_error>

#include <unistd.h>
#include <optional>

namespace mirror::daemon {

namespace {

/// The mirror of a dry run: reads pass through, every write is refused, so that a mistake
/// in the engine's plan-only path could not change the mirror.
class read_only_store final : public store::forwarding_store {
public:
    using forwarding_store::forwarding_store;
    /// As a mirror's: the engine asks for a store it could write (it writes nothing here).
    mirror::store::store_caps caps() const override {
        auto caps = forwarding_store::caps();
        caps.can_write = caps.create_only = true;
        return caps;
    }
    awaitable<result<std::unique_ptr<mirror::store::object_writer>>> open_writer(std::string key, mirror::store::write_mode) override {
        co_return refused(key);
    }
    awaitable<result<void>> remove(std::string key) override { co_return refused(key); }
    awaitable<result<std::size_t>> discard_incomplete_writes() override { co_return refused("(uploads)"); }
    awaitable<result<std::string>> write_conditional(std::string key, std::string, std::optional<std::string>) override {
        co_return refused(key);
    }

private:
    error refused(std::string const& key) const {
        return make_error(io::store_errc::rejected, "dry run: " + describe() + key + " is not written");
    }
};

std::string short_id(std::string const& id) { return id.size() > 13 ? id.substr(0, 13) + "…" : id; }

std::string files_and_bytes(std::uint64_t files, std::uint64_t bytes) {
    return std::to_string(files) + " file(s), " + std::to_string(bytes) + " bytes (" + human_bytes(bytes) + ")";
}

/// The versions it would publish, with what each copies, and those it would hold, with why.
void describe_versions(sync::sync_report const& report, std::function<void(std::string const&)> const& line) {
    if (report.planned.empty() && report.held.empty()) {
        line("no version to publish");
        return;
    }
    if (!report.planned.empty()) {
        std::string ids;
        sync::planned_version all;
        for (auto const& version : report.planned) {
            ids += (ids.empty() ? "" : ", ") + short_id(version.id);
            all.files += version.files, all.bytes += version.bytes;
            all.data_files += version.data_files, all.data_bytes += version.data_bytes;
        }
        line("would publish " + std::to_string(report.planned.size()) + " version(s), oldest first: " + ids);
        for (auto const& version : report.planned)
            line("  " + version.id + ": would copy " + files_and_bytes(version.files, version.bytes) + ", of which " +
                 std::to_string(version.data_files) + " data file(s)");
        line("would copy " + files_and_bytes(all.files, all.bytes) + " in all, of which " +
             files_and_bytes(all.data_files, all.data_bytes) + " of data");
    }
    for (auto const& held : report.held)
        line("would hold " + held.id + ": " + held.why.message);
    if (report.pending_files > 0)
        line("the versions it would hold need " + files_and_bytes(report.pending_files, report.pending_bytes) +
             " of data the mirror lacks");
}

/// The plan of one repository, as lines; an error when it cannot be made.
result<std::string> plan_repository(config::daemon_config const& cfg, config::repository_config const& repo,
                                    io::blocking_pool& pool, std::filesystem::path& empty_folder) {
    throttle_registry throttles;
    auto origin = store::open_store(repo.origin, store::store_role::origin, &pool,
                                    store_options_for(cfg, repo.origin, throttles));
    if (!origin)
        return error{origin.error().code, "origin: " + origin.error().message};
    // A folder mirror is opened as a folder to read: opened to write, it would be made.
    std::string notes;
    bool const is_folder = repo.mirror.find("://") == std::string::npos || repo.mirror.starts_with("file://");
    auto opened = store::open_store(repo.mirror, is_folder ? store::store_role::origin : store::store_role::mirror,
                                    &pool, store_options_for(cfg, repo.mirror, throttles));
    if (!opened && is_folder && opened.error().code == io::store_errc::not_found) {
        // Nothing there yet: planned against an empty folder of this command's own.
        empty_folder = std::filesystem::temp_directory_path() / ("fdl-mirror-dry-run-" + std::to_string(::getpid()));
        std::filesystem::create_directories(empty_folder);
        opened = store::open_store(empty_folder.string(), store::store_role::origin, &pool, {});
        notes = repo.name + ": the mirror folder " + repo.mirror + " does not exist: the pass would make it\n";
    }
    if (!opened)
        return error{opened.error().code, "mirror: " + opened.error().message};
    read_only_store mirror(std::move(*opened));
    auto trust = load_trust(repo);
    if (!trust)
        return trust.error();
    sync::sync_options options;
    options.plan_only = true;
    options.refs = {repo.settings.max_refs, repo.settings.max_ref_name_length};
    options.allow_rewind = repo.settings.allow_rewind;
    options.concurrency = repo.settings.concurrency;
    options.pool = &pool;
    options.trust = std::move(*trust);
    options.catalogs = catalog_settings_of(cfg); // the same gate as the daemon's passes
    options.recheck_published = false;
    for (auto [texts, into] : {std::pair{&repo.include_refs, &options.partial.follow.include},
                               std::pair{&repo.exclude_refs, &options.partial.follow.exclude}})
        for (auto const& text : *texts) {
            auto pattern = fdl::ref_pattern::parse(text);
            if (!pattern)
                return error{pattern.error().code, "refs: " + pattern.error().message};
            into->push_back(std::move(*pattern));
        }
    options.partial.head = repo.head;
    options.partial.depth = repo.depth;
    net::io_context io(1);
    std::optional<sync::sync_report> report;
    net::co_spawn(io, sync::run_sync(**origin, mirror, std::move(options), nullptr),
                  [&](std::exception_ptr e, sync::sync_report r) {
                      if (e)
                          std::rethrow_exception(e);
                      report = std::move(r);
                  });
    io.run();
    if (report->fatal)
        return *report->fatal;
    std::string out = notes;
    auto line = [&](std::string const& text) { out += repo.name + ": " + text + "\n"; };
    if (report->planned_fdl_json)
        line("would create fdl.json (a new mirror)");
    describe_versions(*report, line);
    std::set<std::string> would_hold;
    for (auto const& held : report->held)
        would_hold.insert(held.id);
    std::size_t in_sync = 0;
    for (auto const& ref : report->refs) {
        if (ref.in_sync()) {
            ++in_sync;
            continue;
        }
        if (would_hold.contains(ref.origin_target))
            line("would leave " + ref.name + (ref.mirror_target ? " at " + *ref.mirror_target : " absent") +
                 ": its target " + ref.origin_target + " would be held");
        else
            line(ref.mirror_target ? "would move " + ref.name + " from " + *ref.mirror_target + " to " +
                                         ref.origin_target + " (if the move is allowed)"
                                   : "would create " + ref.name + " at " + ref.origin_target);
    }
    line(std::to_string(in_sync) + " of " + std::to_string(report->refs.size()) + " ref(s) already in sync");
    for (auto const& violation : report->violations)
        line("violation: " + violation.message);
    for (auto const& warning : report->warnings)
        line("warning: " + warning);
    return out;
}

} // namespace

int run_dry(std::string const& config_path) {
    auto loaded = load_for_command(config_path);
    if (!loaded)
        return exit_config;
    io::blocking_pool pool(2);
    std::filesystem::path empty_folder; // made when a folder mirror does not exist yet
    int status = 0;
    std::printf("dry run of %s: nothing is written; each repository as one pass would find it now\n",
                config_path.c_str());
    for (auto const& repo : loaded->repositories) {
        auto plan = plan_repository(*loaded, repo, pool, empty_folder);
        if (!plan) {
            print_error("run --dry-run: repository '" + repo.name + "': " + plan.error().message);
            status = 1;
            continue;
        }
        std::fputs(terminal_safe(*plan, true).c_str(), stdout);
    }
    if (!empty_folder.empty()) {
        std::error_code ignored;
        std::filesystem::remove(empty_folder, ignored);
    }
    return status;
}

} // namespace mirror::daemon
