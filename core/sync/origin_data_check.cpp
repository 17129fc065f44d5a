#include "core/sync/origin_data_check.hpp"

#include "core/io/errors.hpp"
#include "core/sync/errors.hpp"
#include "core/sync/inventory.hpp"
#include "core/sync/ledger.hpp"
#include "core/sync/transfer_slots.hpp"
#include "core/sync/workers.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

namespace mirror::sync {

namespace {

/// Files asked about together when the origin cannot list: enough to keep `concurrency`
/// asks in flight most of the time, few enough that their paths cost little.
constexpr std::size_t ask_batch = 1024;

error deleted(std::string const& key) {
    return make_error(sync_errc::file_deleted_at_origin,
                      "origin: " + key + ": a data file the mirror copied is gone from the origin (the mirror keeps it)");
}

error resized(std::string const& key, std::uint64_t now, std::uint64_t copied) {
    return make_error(sync_errc::data_file_changed_at_origin,
                      "origin: " + key + ": the origin now serves " + std::to_string(now) +
                          " bytes, the mirror copied " + std::to_string(copied) + " (the mirror keeps its copy)");
}

/// A file of the mirror's ledger and the size the origin gave for it (none: absent).
struct compared_file {
    std::string path;
    std::uint64_t copied = 0;
    std::optional<std::uint64_t> at_origin;
};

/// Stops the walk of the ledger once the report has its failure.
error stop_walk() { return make_error(sync_errc::stopped, "origin data check stopped"); }

} // namespace

awaitable<origin_data_report> check_origin_data(store::store& origin, store::store& mirror,
                                                std::size_t concurrency, transfer_slots* shared, std::size_t memory) {
    origin_data_report report;
    auto data_dir = co_await load_mirror_data_dir(mirror);
    if (!data_dir) {
        report.failure = data_dir.error();
        co_return report;
    }
    auto note = [&](compared_file const& file) {
        std::string key = *data_dir + file.path;
        report.files += 1;
        if (!file.at_origin)
            report.violations.push_back(deleted(key));
        else if (*file.at_origin != file.copied)
            report.violations.push_back(resized(key, *file.at_origin, file.copied));
    };
    // The mirror's ledger is walked a segment at a time (never held whole), each file
    // compared in the ledger's order: with the origin's listing, or asked in batches.
    std::optional<path_sizes> listed;
    if (origin.caps().can_list) {
        auto files = co_await list_data_sizes(origin, *data_dir, memory == 0 ? SIZE_MAX : memory);
        if (!files) {
            report.failure = with_context(files.error(), "origin");
            co_return report;
        }
        listed = std::move(*files);
    }
    std::vector<compared_file> batch;
    // Asks the origin about `batch`, up to `concurrency` at once, and notes the files in
    // order. An ask that fails for another reason than an absent file stops the pulling of
    // more (every file before it was pulled already) and the check at that file.
    std::function<awaitable<bool>()> ask_batch_of_files = [&]() -> awaitable<bool> {
        std::optional<error> failure;
        std::size_t failed_at = batch.size();
        std::size_t pulled = 0;
        std::function<awaitable<void>()> worker = [&]() -> awaitable<void> {
            while (pulled < batch.size() && !failure) {
                std::size_t const i = pulled++;
                transfer_slots::slot slot;
                if (shared != nullptr)
                    slot = co_await shared->acquire();
                auto info = co_await origin.stat(*data_dir + batch[i].path);
                if (info) {
                    batch[i].at_origin = info->size;
                } else if (info.error().code != io::store_errc::not_found && i < failed_at) {
                    failure = with_context(info.error(), "origin");
                    failed_at = i;
                }
            }
        };
        co_await run_workers(std::min(std::max<std::size_t>(1, concurrency), std::max<std::size_t>(1, batch.size())),
                             worker);
        for (std::size_t i = 0; i < failed_at; ++i)
            note(batch[i]);
        batch.clear();
        if (!failure)
            co_return true;
        report.failure = std::move(failure);
        co_return false;
    };
    ledger_visitor compare = [&](data_ledger& entries) -> awaitable<result<void>> {
        for (auto const& [path, entry] : entries) {
            if (listed) {
                auto const* size = listed->find(path);
                note(compared_file{path, entry.bytes, size ? std::optional(*size) : std::nullopt});
                continue;
            }
            batch.push_back(compared_file{path, entry.bytes, std::nullopt});
            if (batch.size() >= ask_batch && !co_await ask_batch_of_files())
                co_return stop_walk();
        }
        co_return result<void>();
    };
    ledger_reads const reads{concurrency, shared, memory};
    auto walked = co_await for_each_new_ledger_entries(mirror, compare, reads);
    if (report.failure)
        co_return report;
    if (!walked) {
        report.failure = with_context(walked.error(), "mirror");
        co_return report;
    }
    if (!batch.empty())
        co_await ask_batch_of_files();
    co_return report;
}

} // namespace mirror::sync
