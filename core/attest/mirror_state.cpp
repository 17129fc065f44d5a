#include "core/attest/mirror_state.hpp"

#include "core/fdl/repo_settings.hpp"
#include "core/fdl/version_record.hpp"
#include "core/io/errors.hpp"
#include "core/sync/inventory.hpp"
#include "core/sync/limits.hpp"
#include "core/sync/workers.hpp"
#include "verify/sha256.hpp"

#include <functional>
#include <set>

namespace mirror::attest {

awaitable<result<record_facts>> read_record_facts(store::store& from, std::string id) {
    std::string const key = "versions/" + id + "/version.json";
    auto bytes = co_await store::read_all(from, key, sync::limits::version_json);
    if (!bytes)
        co_return with_context(bytes.error(), from.describe());
    record_facts out{verify::to_hex(verify::sha256_of(*bytes)), {}};
    if (auto record = fdl::parse_version_record(*bytes, key); record)
        out.first_parent = record->first_parent().value_or("");
    co_return out;
}

awaitable<result<mirror_state>> read_mirror_state(store::store& mirror, std::size_t concurrency,
                                                  std::map<std::string, std::string, std::less<>> const* known,
                                                  std::vector<std::string> const* expected) {
    mirror_state state;
    auto fdl_json = co_await store::read_all(mirror, "fdl.json", sync::limits::fdl_json);
    if (!fdl_json)
        co_return with_context(fdl_json.error(), mirror.describe());
    state.fdl_json_sha256 = verify::to_hex(verify::sha256_of(*fdl_json));
    if (auto settings = fdl::parse_repo_settings(*fdl_json); settings)
        state.repository_id = settings->id;
    // No limit on the refs: every one the mirror holds is stated, or it is unattested.
    auto refs = co_await sync::read_refs(mirror, "mirror", {SIZE_MAX, SIZE_MAX});
    if (!refs)
        co_return refs.error();
    state.refs = std::move(refs->refs);
    state.refused_refs = std::move(refs->refused);
    for (auto const& [name, why] : refs->unsettled)
        state.refused_refs.push_back(why);
    if (mirror.caps().can_list) {
        state.refs_json_problems = std::move(refs->refs_json_disagreements);
        if (!refs->refs_json)
            state.refs_json_problems.push_back("mirror: refs.json: not found (readers that cannot list the mirror "
                                               "see no refs)");
    }
    std::set<std::string, std::less<>> targets;
    for (auto const& [name, id] : state.refs)
        targets.insert(id);
    // The versions to account for: the listing's published ones, or without a listing the
    // ones the refs name and the caller expects.
    std::set<std::string, std::less<>> published;
    bool const listing = mirror.caps().can_list;
    if (listing) {
        auto listed = co_await sync::list_versions(mirror);
        if (!listed)
            co_return with_context(listed.error(), mirror.describe());
        for (auto const& [id, files] : listed->versions)
            if (files.contains("version.json")) // else not published: no reader sees it
                published.insert(id);
    } else {
        published = targets;
        if (expected)
            published.insert(expected->begin(), expected->end());
    }
    std::vector<std::string> to_read;
    for (auto const& id : published) {
        if (known && !targets.contains(id)) {
            if (auto remembered = known->find(id); remembered != known->end()) {
                state.versions.emplace(id, remembered->second);
                continue;
            }
        }
        to_read.push_back(id);
    }
    std::size_t next = 0;
    std::optional<error> failure;
    std::function<awaitable<void>()> worker = [&]() -> awaitable<void> {
        while (next < to_read.size() && !failure) {
            std::string const id = to_read[next++];
            auto facts = co_await read_record_facts(mirror, id);
            if (!facts && !listing && facts.error().code == io::store_errc::not_found)
                continue; // not there: for the caller to miss
            if (!facts) {
                failure = facts.error();
                break;
            }
            state.versions.emplace(id, std::move(facts->sha256));
            state.first_parents.emplace(id, std::move(facts->first_parent));
        }
    };
    co_await sync::run_workers(std::max<std::size_t>(1, std::min(concurrency, to_read.size())), worker);
    if (failure)
        co_return *failure;
    co_return state;
}

} // namespace mirror::attest
