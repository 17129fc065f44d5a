#include "core/sync/plan.hpp"

#include "core/sync/errors.hpp"
#include "core/sync/ledger.hpp"

#include <set>

namespace mirror::sync {

static expectation pinned(fdl::pinned_file const& file) {
    return {file.bytes, file.sha256, "version.json"};
}

version_plan plan_version(version_inputs const& in, path_sizes const& mirror_data) {
    version_plan plan;
    std::string const folder = "versions/" + in.id + "/";
    auto const& record = *in.record;

    for (auto const& file : in.data_files) {
        auto const* have = mirror_data.find(file.path);
        if (!have) {
            plan.steps.push_back({in.data_dir + file.path, step_kind::data_file, {file.bytes, {}, in.data_files_pinned_by}});
        } else if (*have != file.bytes) {
            plan.conflicts.push_back(make_error(
                sync_errc::data_file_conflict, in.data_dir + file.path + ": the mirror holds " +
                                                   std::to_string(*have) + " bytes, the version needs " +
                                                   std::to_string(file.bytes) + " (the mirror's copy is kept)"));
        }
    }

    plan.data_files = in.data_files;
    if (!in.data_files.empty())
        plan.steps.push_back({ledger_key(in.id), step_kind::ledger, {}});

    // Which files of the folder exist: the listing when there is one; otherwise what the
    // record pins (required) and what the spec allows (probed, optional).
    auto listed = [&](std::string const& path) {
        return in.origin_files == nullptr || in.origin_files->contains(path);
    };
    std::set<std::string> planned{"version.json", "version.json.sig", "expired.json"};
    auto add_pinned = [&](std::optional<fdl::pinned_file> const& file, bool needed) {
        if (!file || !planned.insert(file->path).second)
            return;
        // An expired version keeps only what remains at the origin.
        if (needed || listed(file->path))
            plan.steps.push_back({folder + file->path, step_kind::version_file, pinned(*file),
                                  !needed && in.origin_files == nullptr});
    };
    add_pinned(record.catalog, !in.expired);
    add_pinned(record.dataset, !in.expired);
    add_pinned(record.files, !in.expired);

    if (in.origin_files != nullptr) {
        for (auto const& [path, size] : *in.origin_files)
            if (path.starts_with("catalogs/") && planned.insert(path).second)
                plan.steps.push_back({folder + path, step_kind::version_file, {size, {}, "the origin's listing"}});
        for (auto const& [path, size] : *in.origin_files)
            if (planned.insert(path).second)
                plan.steps.push_back({folder + path, step_kind::version_file, {size, {}, "the origin's listing"}});
    } else if (!in.expired) {
        for (auto const& format : in.catalog_formats)
            if (planned.insert("catalogs/" + format + ".duckdb").second)
                plan.steps.push_back({folder + "catalogs/" + format + ".duckdb", step_kind::version_file, {}, true});
    }
    if (listed("version.json.sig"))
        plan.steps.push_back({folder + "version.json.sig", step_kind::version_file, {}, in.origin_files == nullptr});
    if (in.expired)
        plan.steps.push_back({folder + "expired.json", step_kind::version_file, {}});
    plan.steps.push_back({folder + "version.json", step_kind::record, {}});
    return plan;
}

} // namespace mirror::sync
