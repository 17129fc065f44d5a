#include "core/sync/origin_data_check.hpp"

#include "core/store/errors.hpp"
#include "core/sync/errors.hpp"
#include "core/sync/inventory.hpp"
#include "core/sync/ledger.hpp"
#include "core/sync/transfer_slots.hpp"
#include "core/sync/workers.hpp"

#include <algorithm>
#include <functional>
#include <vector>

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

awaitable<origin_data_report> check_origin_data(store::store& origin, store::store& mirror,
                                                std::size_t concurrency, transfer_slots* shared) {
    origin_data_report report;
    auto loaded = co_await load_mirror_ledger(mirror);
    if (!loaded) {
        report.failure = loaded.error();
        co_return report;
    }
    auto const& ledger = loaded->files;
    // The origin's size of each file, in the ledger's order: from a listing, or asked.
    std::vector<std::optional<std::uint64_t>> sizes(ledger.size());
    std::optional<error> failure; ///< of the asking, at file `failed_at`
    std::size_t failed_at = ledger.size();
    if (origin.caps().can_list) {
        auto files = co_await list_data_files(origin, loaded->data_dir);
        if (!files) {
            report.failure = with_context(files.error(), "origin");
            co_return report;
        }
        std::size_t i = 0;
        for (auto const& [path, entry] : ledger) {
            if (auto found = files->find(path); found != files->end())
                sizes[i] = found->second;
            ++i;
        }
    } else {
        // Up to `concurrency` asks in flight. One that fails for another reason than an
        // absent file stops the pulling of more; every file before it was pulled already.
        std::vector<data_ledger::const_iterator> order;
        for (auto it = ledger.begin(); it != ledger.end(); ++it)
            order.push_back(it);
        std::size_t pulled = 0;
        std::function<awaitable<void>()> worker = [&]() -> awaitable<void> {
            while (pulled < order.size() && !failure) {
                std::size_t const i = pulled++;
                transfer_slots::slot slot;
                if (shared != nullptr)
                    slot = co_await shared->acquire();
                auto info = co_await origin.stat(loaded->data_dir + order[i]->first);
                if (info) {
                    sizes[i] = info->size;
                } else if (info.error().code != store::store_errc::not_found && i < failed_at) {
                    failure = with_context(info.error(), "origin");
                    failed_at = i;
                }
            }
        };
        co_await run_workers(std::min(std::max<std::size_t>(1, concurrency), std::max<std::size_t>(1, order.size())),
                             worker);
    }
    std::size_t i = 0;
    for (auto const& [path, entry] : ledger) {
        if (i == failed_at) {
            report.failure = failure;
            co_return report;
        }
        std::string key = loaded->data_dir + path;
        report.files += 1;
        if (!sizes[i])
            report.violations.push_back(deleted(key));
        else if (*sizes[i] != entry.bytes)
            report.violations.push_back(resized(key, *sizes[i], entry.bytes));
        ++i;
    }
    co_return report;
}

} // namespace mirror::sync
