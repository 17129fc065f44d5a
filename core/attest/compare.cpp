#include "core/attest/compare.hpp"


#include "core/attest/envelope.hpp"
#include "core/attest/mirror_state.hpp"
#include "core/fdl/repo_settings.hpp"
#include "core/sync/inventory.hpp"
#include "core/sync/ledger.hpp"
#include "verify/sha256.hpp"
#include "core/sync/limits.hpp"

#include <algorithm>
#include <set>

namespace mirror::attest {

namespace {

location_state from_statement(std::string name, mirror_statement const& s) {
    location_state out;
    out.name = std::move(name);
    out.repository_id = s.repository_id;
    for (auto const& ref : s.refs)
        out.refs.emplace(ref.name, ref.version);
    for (auto const& version : s.versions)
        out.versions.emplace(version.id, version.version_json_sha256);
    out.from_attestation = true;
    out.attested_at = s.attested_at;
    return out;
}

/// A store that cannot list (an HTTP origin): its refs, and the versions they reach by
/// their first parents, each record read once.
awaitable<result<location_state>> walk_records(store::store& from, std::string name, read_settings const& settings) {
    location_state out;
    out.name = std::move(name);
    auto fdl_json = co_await store::read_all(from, "fdl.json", sync::limits::fdl_json);
    if (!fdl_json)
        co_return with_context(fdl_json.error(), from.describe());
    if (auto parsed = fdl::parse_repo_settings(*fdl_json); parsed)
        out.repository_id = parsed->id;
    auto refs = co_await sync::read_refs(from, out.name, {SIZE_MAX, SIZE_MAX});
    if (!refs)
        co_return refs.error();
    out.refs = std::move(refs->refs);
    std::vector<std::string> to_read;
    for (auto const& [ref, id] : out.refs)
        to_read.push_back(id);
    while (!to_read.empty() && out.versions.size() < settings.max_versions) {
        std::string id = std::move(to_read.back());
        to_read.pop_back();
        if (out.versions.contains(id))
            continue;
        auto facts = co_await read_record_facts(from, id);
        if (!facts)
            co_return facts.error();
        out.versions.emplace(id, facts->sha256);
        out.first_parents.emplace(id, facts->first_parent);
        if (!facts->first_parent.empty())
            to_read.push_back(facts->first_parent);
    }
    co_return out;
}

std::string joined(std::vector<std::string> const& items, std::string const& separator) {
    std::string out;
    for (auto const& item : items)
        out += (out.empty() ? "" : separator) + item;
    return out;
}

/// "X at A, B; Y at C": each value and the copies that hold it.
std::string where_each(std::map<std::string, std::vector<std::string>> const& by_value) {
    std::vector<std::string> parts;
    for (auto const& [value, names] : by_value)
        parts.push_back(value + " at " + joined(names, ", "));
    return joined(parts, "; ");
}

/// The first parents the comparison needs, from the copies' records as read, else from
/// the store of a copy that holds the version.
class parent_source {
public:
    parent_source(std::vector<location_state> const& states, std::vector<store::store*> const& stores)
        : states_(states), stores_(stores) {
        for (auto const& state : states)
            for (auto const& [id, parent] : state.first_parents)
                known_.emplace(id, parent);
    }

    /// nullopt when no copy can tell.
    awaitable<std::optional<std::string>> parent_of(std::string const& id) {
        if (auto found = known_.find(id); found != known_.end())
            co_return found->second;
        for (std::size_t i = 0; i < states_.size(); ++i) {
            if (i >= stores_.size() || stores_[i] == nullptr || !states_[i].versions.contains(id))
                continue;
            auto facts = co_await read_record_facts(*stores_[i], id);
            if (!facts)
                continue;
            known_.emplace(id, facts->first_parent);
            co_return facts->first_parent;
        }
        co_return std::nullopt;
    }

    /// The line back from `tip` by first parents: until every id of `wanted` is on it, or
    /// to its root when `to_root`, or as far as the parents are known.
    awaitable<std::vector<std::string>> line_from(std::string tip, std::set<std::string> const& wanted, bool to_root) {
        std::vector<std::string> line{tip};
        std::size_t found = wanted.contains(tip) ? 1 : 0;
        while (line.size() < sync::limits::history_length && (to_root || found < wanted.size())) {
            auto parent = co_await parent_of(line.back());
            if (!parent || parent->empty())
                break;
            line.push_back(*parent);
            found += wanted.contains(*parent) ? 1 : 0;
        }
        co_return line;
    }

private:
    std::vector<location_state> const& states_;
    std::vector<store::store*> const& stores_;
    std::map<std::string, std::string, std::less<>> known_;
};

} // namespace

namespace {

awaitable<result<location_state>> read_contents(store::store& from, std::string name, read_settings const& settings) {
    if (settings.trusted != nullptr) {
        auto text = co_await store::read_if_present(from, std::string(attestation_key), settings.max_attestation_bytes);
        if (text && *text) {
            auto opened = open_envelope(**text, *settings.trusted, settings.ns, settings.now);
            if (opened && opened->statement.expires > settings.now)
                co_return from_statement(std::move(name), opened->statement);
        }
    }
    if (from.caps().can_list) {
        auto state = co_await read_mirror_state(from, settings.concurrency);
        if (!state)
            co_return state.error();
        location_state out;
        out.name = std::move(name);
        out.repository_id = state->repository_id;
        out.refs = std::move(state->refs);
        out.versions = std::move(state->versions);
        out.first_parents = std::move(state->first_parents);
        // A mirror's ledger says what each data file was when copied: compared for free of
        // the files themselves (one read a version). An origin has none.
        auto ledger = co_await sync::load_ledger(
            from, sync::ledger_reads{std::min<std::size_t>(settings.concurrency, 8), nullptr, settings.ledger_memory});
        if (!ledger)
            co_return with_context(ledger.error(), out.name + ": the ledger");
        for (auto const& [path, entry] : *ledger)
            out.data_files.emplace(path, std::to_string(entry.bytes) + " " + verify::to_hex(entry.sha256));
        co_return out;
    }
    co_return co_await walk_records(from, std::move(name), settings);
}

} // namespace

awaitable<result<location_state>> read_location(store::store& from, std::string name, read_settings const& settings) {
    auto state = co_await read_contents(from, std::move(name), settings);
    if (!state)
        co_return state;
    // A partial mirror says what it follows: the refs it leaves out are not lag. A record
    // that cannot be read leaves the copy compared as a full one.
    if (auto partial = co_await sync::read_partial_record(from); partial && *partial)
        state->partial = std::move(**partial);
    co_return state;
}

awaitable<comparison> compare_locations(std::vector<location_state> states, std::vector<store::store*> stores) {
    comparison out;
    std::size_t const n = states.size();
    out.most_behind.assign(n, 0);

    std::map<std::string, std::vector<std::string>> by_id;
    for (auto const& state : states)
        by_id[state.repository_id.value_or("(none)")].push_back(state.name);
    if (by_id.size() > 1)
        out.divergences.push_back("fdl.json: not one repository: id " + where_each(by_id));

    std::map<std::string, std::map<std::string, std::vector<std::string>>> holders; // id -> sha256 -> copies
    for (auto const& state : states)
        for (auto const& [id, sha256] : state.versions)
            holders[id][sha256].push_back(state.name);
    for (auto const& [id, by_digest] : holders) {
        std::size_t copies = 0;
        for (auto const& [digest, names] : by_digest)
            copies += names.size();
        out.versions_in_several += copies > 1 ? 1 : 0;
        if (by_digest.size() > 1)
            out.divergences.push_back("versions/" + id + "/version.json: the same version with other bytes: sha256 " +
                                      where_each(by_digest));
    }

    std::map<std::string, std::map<std::string, std::vector<std::string>>> recorded; // path -> "bytes sha256" -> copies
    for (auto const& state : states)
        for (auto const& [path, what] : state.data_files)
            recorded[path][what].push_back(state.name);
    for (auto const& [path, by_content] : recorded) {
        std::size_t copies = 0;
        for (auto const& [what, names] : by_content)
            copies += names.size();
        out.data_files_in_several += copies > 1 ? 1 : 0;
        if (by_content.size() > 1)
            out.divergences.push_back("data file " + path + ": recorded with other bytes by the ledgers: " +
                                      where_each(by_content));
    }

    parent_source parents(states, stores);
    std::set<std::string> names;
    for (auto const& state : states)
        for (auto const& [name, id] : state.refs)
            names.insert(name);
    for (auto const& name : names) {
        ref_comparison row{name, std::vector<std::optional<std::string>>(n), std::vector<std::optional<std::uint64_t>>(n)};
        std::map<std::string, std::vector<std::string>> by_target;
        bool absent_somewhere = false;
        for (std::size_t i = 0; i < n; ++i) {
            if (auto found = states[i].refs.find(name); found != states[i].refs.end()) {
                row.targets[i] = found->second;
                by_target[found->second].push_back(states[i].name);
            } else {
                absent_somewhere = true;
            }
        }
        std::set<std::string> targets;
        for (auto const& [target, copies] : by_target)
            targets.insert(target);
        // The most advanced copy: the target whose line holds every other target.
        std::optional<std::string> leader;
        std::vector<std::string> line;
        if (targets.size() == 1 || !name.starts_with("refs/tags/")) {
            for (auto const& candidate : targets) {
                auto walked = co_await parents.line_from(candidate, targets, absent_somewhere);
                bool const holds_all = std::all_of(targets.begin(), targets.end(), [&](auto const& t) {
                    return std::find(walked.begin(), walked.end(), t) != walked.end();
                });
                if (holds_all) {
                    leader = candidate;
                    line = std::move(walked);
                    break;
                }
            }
        }
        if (!leader) {
            out.divergences.push_back(name + (name.starts_with("refs/tags/") ? ": a tag naming other versions: "
                                                                             : ": not on one line: ") +
                                      where_each(by_target));
            out.refs.push_back(std::move(row));
            continue;
        }
        std::string const leader_copies = joined(by_target[*leader], ", ");
        for (std::size_t i = 0; i < n; ++i) {
            std::uint64_t behind = 0;
            if (row.targets[i]) {
                behind = static_cast<std::uint64_t>(std::find(line.begin(), line.end(), *row.targets[i]) - line.begin());
                row.behind[i] = behind;
                if (behind > 0)
                    out.lags.push_back(name + ": " + states[i].name + " is " + std::to_string(behind) +
                                       " version(s) behind (at " + *row.targets[i] + "; " + leader_copies + " at " +
                                       *leader + ")");
            } else if (states[i].partial && !sync::selection_of(*states[i].partial).follows(name)) {
                out.not_followed.push_back(name + ": not followed by " + states[i].name + " (a partial mirror)");
                continue; // row.behind[i] stays nullopt: not lag
            } else {
                behind = line.size(); // the whole line is missing there
                row.behind[i] = behind;
                out.lags.push_back(name + ": absent at " + states[i].name + " (" + leader_copies + " at " + *leader +
                                   ", " + std::to_string(behind) + " version(s) on its line)");
            }
            out.most_behind[i] = std::max(out.most_behind[i], behind);
        }
        out.refs.push_back(std::move(row));
    }
    co_return out;
}

} // namespace mirror::attest
