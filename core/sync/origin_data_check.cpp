#include "core/sync/origin_data_check.hpp"

#include "core/store/errors.hpp"
#include "core/sync/errors.hpp"
#include "core/sync/inventory.hpp"
#include "core/sync/ledger.hpp"

namespace mirror::sync {

namespace {

error deleted(std::string const& key) {
    return make_error(sync_errc::file_deleted_at_origin,
                      "origin: " + key + ": a data file the mirror copied is gone from the origin (the mirror keeps it)");
}

error resized(std::string const& key, std::uint64_t now, std::uint64_t copied) {
    return make_error(sync_errc::data_file_changed_at_origin,
                      "origin: " + key + ": the origin now serves " + std::to_string(now) +
                          " bytes, the mirror copied " + std::to_string(copied) + " (the mirror keeps its copy)");
}

} // namespace

awaitable<origin_data_report> check_origin_data(store::store& origin, store::store& mirror) {
    origin_data_report report;
    auto loaded = co_await load_mirror_ledger(mirror);
    if (!loaded) {
        report.failure = loaded.error();
        co_return report;
    }
    std::optional<std::map<std::string, std::uint64_t>> listed;
    if (origin.caps().can_list) {
        auto files = co_await list_data_files(origin, loaded->data_dir);
        if (!files) {
            report.failure = with_context(files.error(), "origin");
            co_return report;
        }
        listed = std::move(*files);
    }
    for (auto const& [path, entry] : loaded->files) {
        std::string key = loaded->data_dir + path;
        std::optional<std::uint64_t> size;
        if (listed) {
            if (auto found = listed->find(path); found != listed->end())
                size = found->second;
        } else {
            auto info = co_await origin.stat(key);
            if (!info && info.error().code != store::store_errc::not_found) {
                report.failure = with_context(info.error(), "origin");
                co_return report;
            }
            if (info)
                size = info->size;
        }
        report.files += 1;
        if (!size)
            report.violations.push_back(deleted(key));
        else if (*size != entry.bytes)
            report.violations.push_back(resized(key, *size, entry.bytes));
    }
    co_return report;
}

} // namespace mirror::sync
