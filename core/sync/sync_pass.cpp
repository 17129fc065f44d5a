#include "core/sync/sync_pass.hpp"

#include "core/sync/partial.hpp"

#include "core/catalog/catalog_reader.hpp"
#include "core/fdl/repo_settings.hpp"
#include "core/io/errors.hpp"
#include "core/sync/copy.hpp"
#include "core/sync/detail/pass.hpp"
#include "core/sync/errors.hpp"
#include "core/sync/history.hpp"
#include "core/sync/limits.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <array>
#include <chrono>
#include <ctime>
#include <map>

namespace mirror::sync {

using namespace boost::asio::experimental::awaitable_operators;

namespace detail {

void pass::hold(std::string const& id, error why) {
    if (held.contains(id))
        return;
    if (is_io_failure(why.code))
        report.io_failure = true;
    held.emplace(id, why);
    report.held.push_back({id, std::move(why)});
}

bool pass::note_failure(error const& e, bool on_mirror) {
    if (on_mirror) {
        if (!mirror_failure)
            mirror_failure = e;
        return true;
    }
    if (is_io_failure(e.code))
        report.io_failure = true;
    return false;
}

awaitable<result<loaded_version> const*> load_origin_record(pass& p, std::string id) {
    if (auto it = p.origin_records.find(id); it != p.origin_records.end())
        co_return &it->second;
    std::string key = "versions/" + id + "/version.json";
    auto load = [&]() -> awaitable<result<loaded_version>> {
        auto bytes = co_await store::read_all(p.origin, key, limits::version_json);
        if (!bytes)
            co_return origin_read_error(bytes.error());
        auto record = fdl::parse_version_record(*bytes, key);
        if (!record)
            co_return record.error();
        if (auto same = fdl::check_record_folder(*record, id, key); !same)
            co_return same.error();
        co_return loaded_version{std::move(*bytes), std::move(*record)};
    };
    auto loaded = co_await load();
    auto [it, inserted] = p.origin_records.emplace(id, std::move(loaded));
    co_return &it->second;
}

} // namespace detail

namespace {

using detail::pass;

/// Notes in `up` what a request to one side said of its medium: down on an I/O failure
/// (a later one overrides an earlier success), up on a success seen first.
template <class T>
void observe(std::optional<bool>& up, result<T> const& answer) {
    if (!answer && is_io_failure(answer.error().code))
        up = false;
    else if (!up)
        up = true;
}

/// Reads both fdl.json files and decides whether the mirror holds the same repository.
/// Returns the origin's bytes when the mirror has no fdl.json yet (to be created).
awaitable<result<std::optional<std::string>>> check_identity(pass& p) {
    auto origin_bytes = co_await store::read_all(p.origin, "fdl.json", limits::fdl_json);
    observe(p.report.origin_up, origin_bytes);
    if (!origin_bytes)
        co_return with_context(origin_bytes.error(), "origin");
    auto settings = fdl::parse_repo_settings(*origin_bytes);
    if (!settings)
        co_return with_context(settings.error(), "origin");
    p.settings = std::move(*settings);

    auto mirror_bytes = co_await store::read_if_present(p.mirror, "fdl.json", limits::fdl_json);
    observe(p.report.mirror_up, mirror_bytes);
    if (!mirror_bytes)
        co_return with_context(mirror_bytes.error(), "mirror");
    if (!*mirror_bytes)
        co_return std::optional<std::string>(std::move(*origin_bytes));

    auto held = fdl::parse_repo_settings(**mirror_bytes);
    if (!held)
        co_return with_context(held.error(), "mirror");
    auto shown = [](std::optional<std::string> const& id) { return id ? "'" + *id + "'" : std::string("no id"); };
    if (held->id != p.settings.id)
        co_return make_error(sync_errc::repository_mismatch,
                             "mirror: fdl.json: id: the mirror holds repository " + shown(held->id) +
                                 ", the origin is " + shown(p.settings.id) + "; nothing was written");
    if (held->data_dir != p.settings.data_dir)
        co_return make_error(sync_errc::repository_mismatch, "mirror: fdl.json: data_dir: the mirror's is '" +
                                                                 held->data_dir + "', the origin's '" +
                                                                 p.settings.data_dir + "'; nothing was written");
    if (**mirror_bytes != *origin_bytes) // a promise broken, though not one that changes what readers see
        p.report.violations.push_back(make_error(
            sync_errc::fdl_json_changed,
            "fdl.json: the origin's differs from the copy the mirror made first (same id and data_dir); the mirror "
            "keeps its copy"));
    co_return std::optional<std::string>();
}

/// Walks first parents back from every origin ref to what the mirror already has; in a
/// shallow mirror, no further than its depth, and through the versions it has when
/// `through_published` (a deepened mirror fetches the older versions now in its window).
awaitable<std::vector<std::string>> versions_to_mirror(pass& p, fdl::ref_map const& refs, bool through_published) {
    std::vector<std::vector<std::string>> chains;
    std::set<std::string, std::less<>> walked; // by any ref's walk
    auto const depth = p.options.partial.depth;
    for (auto const& [name, target] : refs) {
        std::vector<std::string> chain;
        std::set<std::string, std::less<>> in_chain;
        std::string current = target;
        for (std::uint64_t seen = 0; !depth || seen < *depth; ++seen) {
            bool const published = p.is_published(current);
            if ((published && !through_published) || p.held.contains(current))
                break;
            // Another ref walked on from here; a shallow walk goes on, as its window may reach deeper.
            if (walked.contains(current) && !depth)
                break;
            if (in_chain.size() >= limits::history_length) {
                p.hold(current, make_error(sync_errc::history_broken,
                                           "versions/" + current + ": history of " + name + " is longer than " +
                                               std::to_string(limits::history_length) + " versions"));
                break;
            }
            auto const* loaded = co_await detail::load_origin_record(p, current);
            if (!*loaded) {
                p.hold(current, (*loaded).error());
                break;
            }
            in_chain.insert(current);
            if (walked.insert(current).second && !published)
                chain.push_back(current);
            auto parent = (*loaded)->record.first_parent();
            if (!parent)
                break;
            if (in_chain.contains(*parent)) {
                p.hold(*parent, make_error(sync_errc::history_broken,
                                           "versions/" + *parent + ": its first parents form a cycle"));
                break;
            }
            current = std::move(*parent);
        }
        chains.push_back(std::move(chain));
    }
    co_return parents_first(mirroring_order(chains), [&](std::string const& id) -> std::optional<std::string> {
        auto it = p.origin_records.find(id);
        if (it == p.origin_records.end() || !it->second)
            return std::nullopt;
        return it->second->record.first_parent();
    });
}

/// The partial record the mirror holds, for a pass that follows part of its origin or
/// looks for a record to remove (a full recheck). One that does not parse is written again
/// (warned): it is the mirror's own note, not a promise to readers.
awaitable<result<std::optional<partial_record>>> partial_record_before(pass& p) {
    if (p.options.partial.everything() && !p.options.recheck_published)
        co_return std::optional<partial_record>();
    auto before = co_await read_partial_record(p.mirror);
    if (!before && is_io_failure(before.error().code))
        co_return with_context(before.error(), "mirror");
    if (!before) {
        p.report.warnings.push_back("mirror: " + before.error().message + " (written again)");
        co_return std::optional<partial_record>(partial_record{});
    }
    co_return std::move(*before);
}

/// Checks that a mirror without fdl.json is empty, so a pass never adopts a folder that
/// holds something else.
result<void> check_empty_mirror(pass const& p, refs_snapshot const& mirror_refs) {
    if (!p.mirror_versions.versions.empty() || !mirror_refs.refs.empty())
        return make_error(sync_errc::repository_mismatch,
                          "mirror: holds versions or refs but no fdl.json; refusing to adopt it");
    return {};
}

/// Compares each ref tip the mirror already has with the origin's version.json bytes.
awaitable<void> check_published_tips(pass& p, fdl::ref_map const& refs) {
    std::set<std::string, std::less<>> checked;
    for (auto const& [name, target] : refs) {
        if (!p.mirror_versions.is_published(target) || !checked.insert(target).second)
            continue;
        if (p.origin_versions) {
            auto const* served = p.origin_versions->files_of(target);
            auto const* held = p.mirror_versions.files_of(target);
            // Expiry may reduce a withdrawn version.json (follow_published takes it), and a
            // size change was already reported by follow_published: only same-size
            // rewrites are left to find here.
            if (served == nullptr || served->contains("expired.json") || !served->contains("version.json") ||
                served->at("version.json") != held->at("version.json"))
                continue;
        }
        auto const* origin = co_await detail::load_origin_record(p, target);
        if (!*origin)
            continue; // reported where the record is needed
        std::string key = "versions/" + target + "/version.json";
        auto held = co_await store::read_all(p.mirror, key, limits::version_json);
        if (!held) {
            p.note_failure(with_context(held.error(), "mirror"), true);
            co_return;
        }
        if (*held != (*origin)->bytes)
            p.report.violations.push_back(make_error(
                sync_errc::version_rewritten,
                key + ": the origin now serves other bytes than the mirror's copy (the mirror keeps its copy)"));
    }
}

/// Versions gathered ahead of their turn: while one version's files are copied, the next
/// ones are gathered, two at a time, so that one's catalog is copied while another's is
/// read (the reader has a thread of its own). What they hold is bounded by
/// limits::look_ahead_bytes, past one version.
struct look_ahead {
    static constexpr std::size_t gatherers = 2;
    explicit look_ahead(net::any_io_executor executor)
        : wake_publisher(executor), wake_gatherer{net::steady_timer(executor), net::steady_timer(executor)} {}
    std::map<std::size_t, detail::gathered_version> ready; ///< by position in the order
    std::size_t next = 0;                                  ///< the position to gather next
    std::uint64_t held = 0;                                ///< by `ready`
    std::size_t running = gatherers;                       ///< gatherers not ended
    std::size_t taking = 0;                                ///< the position the publisher takes next
    bool local_failure = false;                            ///< the scratch folder failed
    bool publishing = true;                                ///< the publisher still takes versions
    net::steady_timer wake_publisher;                      ///< cancelled when a version is ready
    std::array<net::steady_timer, gatherers> wake_gatherer; ///< cancelled when one is taken
};

/// Waits until `signal` is cancelled. Each signal has one waiter, which checks its
/// condition first: on the one I/O thread, no wake-up falls between the two.
awaitable<void> wait_for(net::steady_timer& signal) {
    signal.expires_at(net::steady_timer::time_point::max());
    co_await signal.async_wait(use_op);
}

/// Versions whose memory is below this are not counted against the budget: a small
/// version's files are a few KiB, and thousands of them should not queue.
constexpr std::uint64_t unbudgeted_version_bytes = 64 * 1024;

/// Grants `gathered` (at position `at`) what it keeps in memory from the process's budget,
/// waiting while the budget is spent, except for the version the publisher takes next:
/// that one never waits (what later versions hold cannot come back before it is
/// published), so one version is always gathered ahead, as without a budget. A gatherer
/// waiting is woken each time the publisher takes a version. Versions gathered ahead take
/// grants only while at most half the budget is in use, and an upload buffer asks at most
/// half (s3_writer): so the uploads of the version being published always find room once
/// other uploads end, whatever versions ahead hold.
awaitable<void> grant_memory(pass& p, look_ahead& lane, std::size_t at, std::size_t me,
                             detail::gathered_version& gathered) {
    if (p.options.memory == nullptr || gathered.memory_bytes < unbudgeted_version_bytes)
        co_return;
    auto& budget = *p.options.memory;
    while (!(gathered.memory = budget.try_acquire(gathered.memory_bytes, budget.capacity() / 2)) &&
           lane.publishing && lane.taking != at)
        co_await wait_for(lane.wake_gatherer[me]);
}

/// One of the gatherers: gathers the next version of `order` not yet taken, ahead of
/// publish_in_order. A stop asked for starts no new gathering (which only reads); the
/// publisher decides what the pass ends with.
awaitable<void> gather_ahead(pass& p, std::vector<std::string> const& order, look_ahead& lane, std::size_t me) {
    while (lane.next < order.size()) {
        while (lane.publishing && !lane.ready.empty() && lane.held >= limits::look_ahead_bytes)
            co_await wait_for(lane.wake_gatherer[me]);
        if (!lane.publishing || lane.local_failure || p.mirror_failure || lane.next >= order.size() ||
            p.stop_requested())
            break;
        std::size_t at = lane.next++;
        auto gathered = co_await detail::gather_version(p, order[at]);
        co_await grant_memory(p, lane, at, me, gathered);
        lane.local_failure = lane.local_failure || gathered.scratch_failed; // no later version could pass
        lane.held += gathered.held_bytes;
        lane.ready.emplace(at, std::move(gathered));
        lane.wake_publisher.cancel();
    }
    --lane.running;
    lane.wake_publisher.cancel();
}

/// Publishes the versions of `order` in turn, each once it is gathered, until the mirror
/// fails or the pass is asked to stop (`stopped`).
awaitable<void> publish_in_order(pass& p, std::vector<std::string> const& order, look_ahead& lane, bool& stopped) {
    for (std::size_t at = 0; at < order.size(); ++at) {
        stopped = p.stop_requested();
        if (p.mirror_failure || stopped)
            break;
        // Taken by a gatherer: it will be ready. Not taken: a gatherer may still take it.
        lane.taking = at;
        for (auto& signal : lane.wake_gatherer)
            signal.cancel(); // one waiting for memory for this version goes on without
        while (!lane.ready.contains(at) && (at < lane.next || lane.running > 0))
            co_await wait_for(lane.wake_publisher);
        detail::gathered_version next{order[at]}; // gathered by publish_version if no gatherer did
        if (auto it = lane.ready.find(at); it != lane.ready.end()) {
            next = std::move(it->second);
            lane.ready.erase(it);
            lane.held -= next.held_bytes;
            for (auto& signal : lane.wake_gatherer)
                signal.cancel();
        }
        co_await detail::publish_version(p, next);
    }
    lane.publishing = false;
    for (auto& signal : lane.wake_gatherer)
        signal.cancel();
}

/// What the pass says of the trusted keys before it reads anything: allowed_signers lines
/// skipped, and fdl.json's announced signers against the trusted ones (never trusted).
void note_trust(pass& p) {
    auto& report = p.report;
    auto const& trust = p.options.trust;
    report.allowed_signers_skipped = trust.signers.skipped.size();
    for (auto const& skipped : trust.signers.skipped)
        report.warnings.push_back(verify::skipped_line_warning(skipped));
    if (trust.policy == verify::signature_policy::off || p.settings.signers.empty())
        return;
    report.announced_keys = verify::compare_announced_keys(p.settings.signers, trust.signers);
    for (auto const& k : report.announced_keys.announced_not_trusted)
        report.warnings.push_back("fdl.json announces a key that is not trusted here: " + k);
    for (auto const& k : report.announced_keys.trusted_not_announced)
        report.warnings.push_back("a trusted key is not announced in the origin's fdl.json: " + k);
    for (auto const& k : report.announced_keys.unreadable)
        report.warnings.push_back(k);
}

/// Origin refs unreadable on two looks this pass: for a patient caller, a warning the first
/// time (a publisher rewriting in place is seen so), a violation when the previous pass
/// saw it too; for the others, a violation.
void note_unsettled_refs(sync_report& report, refs_snapshot const& origin_refs, sync_options const& options) {
    for (auto const& [name, why] : origin_refs.unsettled) {
        report.unsettled_refs.insert(name);
        if (!options.patient_with_unsettled_refs)
            report.violations.push_back(why);
        else if (options.unsettled_before.contains(name))
            report.violations.push_back(error{why.code, why.message + " (at two passes in a row)"});
        else
            report.warnings.push_back(why.message + ": an origin inconsistency (a write in flight?), read twice; "
                                                    "the mirror keeps its ref, and the next pass reads it again");
    }
}

/// What a killed pass left unfinished (S3's incomplete multipart uploads) is invisible to
/// readers but costs storage: discarded before this pass writes its own.
awaitable<void> discard_left_over_writes(pass& p) {
    auto discarded = co_await p.mirror.discard_incomplete_writes();
    if (!discarded)
        p.report.warnings.push_back("mirror: unfinished writes of an earlier pass were not discarded: " +
                                    discarded.error().message);
    else if (*discarded > 0)
        p.report.warnings.push_back("mirror: discarded " + std::to_string(*discarded) +
                                    " unfinished write(s) of an earlier pass (incomplete multipart uploads)");
}

/// Writes the origin's fdl.json into a mirror that has none, once the mirror is known to
/// be empty.
awaitable<result<void>> create_fdl_json(pass& p, std::string bytes, refs_snapshot const& mirror_refs) {
    if (auto empty = check_empty_mirror(p, mirror_refs); !empty)
        co_return empty.error();
    auto created = co_await store::write_all(p.mirror, "fdl.json", bytes, store::write_mode::create_only);
    if (!created && created.error().code == io::store_errc::already_exists) {
        // On S3 a PUT can land while its answer is lost, and the retry then finds the
        // object this pass wrote: the same bytes are ours; anything else is not.
        auto there = co_await store::read_all(p.mirror, "fdl.json", limits::fdl_json);
        if (there && *there == bytes)
            created = result<void>();
    }
    if (!created)
        co_return with_context(created.error(), "mirror: fdl.json");
    co_return result<void>();
}

/// Re-examines the published versions (late files, expiry, withdrawal, rewrites): from the
/// origin's listing, or, where it cannot list, from probes of what the mirror holds.
awaitable<void> recheck_published(pass& p) {
    if (!p.origin_versions) {
        std::vector<std::string> formats;
        for (auto const& format : p.settings.catalog_formats)
            formats.push_back(format.ducklake);
        auto probed =
            co_await probe_versions(p.origin, p.mirror_versions, std::move(formats), p.options.concurrency);
        if (probed)
            p.origin_versions = std::move(*probed);
        else
            p.report.warnings.push_back("could not re-examine published versions: " +
                                        with_context(probed.error(), "origin").message);
    }
    if (p.origin_versions)
        co_await detail::follow_published(p);
}

/// A dry run: each version of `order` gathered and planned in turn, as publish_in_order
/// would, one at a time (a dry run has no copies to overlap), then how each ref stands.
awaitable<void> plan(pass& p, bool creates_fdl_json, refs_snapshot const& origin_refs, refs_snapshot const& mirror_refs,
                     std::vector<std::string> const& order) {
    p.report.planned_fdl_json = creates_fdl_json;
    for (auto const& id : order) {
        if (p.mirror_failure || p.scratch.failed() || p.stop_requested())
            break;
        detail::gathered_version next{id};
        co_await detail::assess_version(p, next);
    }
    for (auto const& [name, target] : origin_refs.refs) {
        auto there = mirror_refs.refs.find(name);
        p.report.refs.push_back({name, target,
                                 there == mirror_refs.refs.end() ? std::nullopt : std::optional(there->second), 0});
    }
}

} // namespace

awaitable<sync_report> run_sync(store::store& origin, store::store& mirror, sync_options options,
                                sync_observer* observer) {
    auto started = std::chrono::steady_clock::now();
    sync_report report;
    pass p{origin, mirror, options, observer, report};
    bool mirror_known = false; // the mirror's versions were listed
    auto finish = [&]() -> sync_report {
        if (p.mirror_failure && !report.fatal)
            report.fatal = p.mirror_failure;
        if (p.mirror_failure && is_io_failure(p.mirror_failure->code))
            report.mirror_up = false;
        if (mirror_known) {
            std::uint64_t published = p.published_now.size();
            for (auto const& [id, files] : p.mirror_versions.versions)
                published += files.contains("version.json") ? 1 : 0;
            report.versions_in_mirror = published;
        }
        report.pending_files = p.pending_data.size();
        for (auto const& [key, bytes] : p.pending_data)
            report.pending_bytes += bytes;
        report.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
        return std::move(report);
    };

    p.now = static_cast<std::int64_t>(std::time(nullptr));
    if (!options.partial.everything())
        report.partial = describe_partial(record_of(options.partial, p.now));
    if (!catalog::reader_available())
        report.warnings.push_back("no catalog reader in this build (built without DuckDB): data files are taken "
                                  "from files.json, and catalogs are not checked");
    auto caps = mirror.caps();
    if (!caps.can_list || !caps.can_write || !caps.create_only) {
        report.fatal = make_error(sync_errc::mirror_not_usable,
                                  "mirror: " + mirror.describe() + " cannot list, write and create exclusively");
        co_return finish();
    }
    auto create_fdl = co_await check_identity(p);
    if (!create_fdl) {
        report.fatal = create_fdl.error();
        co_return finish();
    }
    if (options.before_first_write && !options.plan_only) {
        if (auto ready = options.before_first_write(); !ready) {
            report.fatal = ready.error();
            co_return finish();
        }
    }
    if (!options.plan_only)
        co_await discard_left_over_writes(p);
    note_trust(p);
    // refs.json's tree within a share of the budget, as a version's files are (issue 45: a
    // 16 MiB refs.json of short values took 304 MiB).
    // The listings of versions/ within a quarter of it too, checked as they are read.
    auto origin_limits = options.refs;
    ref_limits mirror_limits{SIZE_MAX, SIZE_MAX};
    std::size_t const listing_bytes = listing_share(options.memory);
    origin_limits.max_refs_json_tree_bytes = std::min(origin_limits.max_refs_json_tree_bytes, listing_bytes);
    mirror_limits.max_refs_json_tree_bytes = std::min(mirror_limits.max_refs_json_tree_bytes, listing_bytes);
    auto origin_refs = co_await read_refs(origin, "origin", origin_limits);
    observe(report.origin_up, origin_refs);
    if (!origin_refs) {
        report.fatal = origin_refs.error();
        co_return finish();
    }
    if (auto selected = select_refs(*origin_refs, options.partial.follow, options.partial.head); !selected) {
        report.fatal = selected.error();
        co_return finish();
    }
    report.violations.insert(report.violations.end(), origin_refs->refused.begin(), origin_refs->refused.end());
    note_unsettled_refs(report, *origin_refs, options);
    report.warnings.insert(report.warnings.end(), origin_refs->warnings.begin(), origin_refs->warnings.end());
    if (origin.caps().can_list) {
        auto listed = co_await list_versions(origin, listing_bytes);
        observe(report.origin_up, listed);
        if (!listed) {
            report.fatal = with_context(listed.error(), "origin");
            co_return finish();
        }
        for (auto const& name : listed->refused)
            report.warnings.push_back("origin: " + name + " (not copied)");
        p.origin_versions = std::move(*listed);
    }
    auto mirror_listed = co_await list_versions(mirror, listing_bytes);
    // The mirror's refs are the pass's own writing: no limit, so that none is forgotten.
    auto mirror_refs = co_await read_refs(mirror, "mirror", mirror_limits);
    observe(report.mirror_up, mirror_listed);
    observe(report.mirror_up, mirror_refs);
    if (!mirror_listed || !mirror_refs) {
        report.fatal = with_context(mirror_listed ? mirror_refs.error() : mirror_listed.error(), "mirror");
        co_return finish();
    }
    p.mirror_versions = std::move(*mirror_listed);
    mirror_known = true;
    report.warnings.insert(report.warnings.end(), mirror_refs->warnings.begin(), mirror_refs->warnings.end());

    auto partial_before = co_await partial_record_before(p);
    if (!partial_before) {
        p.note_failure(partial_before.error(), true);
        co_return finish();
    }
    // A shallow mirror looks into its whole window when it deepens, and at full rechecks
    // (a deepening pass cut short is finished then).
    bool const through_published = deepens(*partial_before, options.partial.depth) ||
                                   (options.partial.depth && options.recheck_published);
    if (options.plan_only) {
        if (*create_fdl) {
            if (auto empty = check_empty_mirror(p, *mirror_refs); !empty) {
                report.fatal = empty.error();
                co_return finish();
            }
        }
        auto would_publish = co_await versions_to_mirror(p, origin_refs->refs, through_published);
        co_await plan(p, create_fdl->has_value(), *origin_refs, *mirror_refs, would_publish);
        co_return finish();
    }
    if (*create_fdl) {
        if (auto created = co_await create_fdl_json(p, std::move(**create_fdl), *mirror_refs); !created) {
            report.fatal = created.error();
            co_return finish();
        }
    }
    // What a partial mirror follows, recorded before it copies anything of it (a full
    // mirror looks for a record to remove at its full rechecks only).
    if (auto recorded = co_await keep_partial_record(mirror, options.partial, *partial_before, p.now); !recorded) {
        p.note_failure(recorded.error(), true);
        co_return finish();
    }
    if (options.recheck_published)
        co_await recheck_published(p);
    auto order = co_await versions_to_mirror(p, origin_refs->refs, through_published);
    bool stopped = false;
    auto executor = co_await net::this_coro::executor;
    look_ahead lane(executor);
    auto first_gatherer = gather_ahead(p, order, lane, 0);
    auto second_gatherer = gather_ahead(p, order, lane, 1);
    auto publishing = publish_in_order(p, order, lane, stopped);
    co_await (std::move(first_gatherer) && std::move(second_gatherer) && std::move(publishing));
    stopped = stopped || p.stop_requested();
    if (stopped && !p.mirror_failure)
        report.fatal = make_error(sync_errc::stopped, "pass stopped before its end, as asked; refs moved to what "
                                                      "it published, the rest waits for the next pass");
    if (!p.mirror_failure && !stopped && options.recheck_published)
        co_await check_published_tips(p, origin_refs->refs);
    if (!p.mirror_failure)
        co_await detail::update_refs(p, *origin_refs, *mirror_refs);
    co_return finish();
}

} // namespace mirror::sync
