#include "core/sync/scrub.hpp"

#include "core/io/errors.hpp"
#include "core/sync/copy.hpp"
#include "core/sync/errors.hpp"
#include "core/sync/ledger.hpp"
#include "core/sync/transfer_slots.hpp"
#include "core/sync/workers.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <vector>

namespace mirror::sync {

namespace {

/// The outcome of one file's read, in its slot while reads overlap.
struct checked_file {
    bool done = false;
    std::optional<error> problem; ///< as hash_object failed
};

/// A failed read says something about the file (a finding) rather than about the way to it.
bool is_finding(error const& e) {
    return e.code == sync_errc::size_mismatch || e.code == sync_errc::sha256_mismatch ||
           e.code == sync_errc::missing_file || e.code == sync_errc::not_a_regular_file;
}

/// The files of one step: after position.after, in name order, up to the first whose
/// bytes reach `budget`. It depends on the ledger's sizes alone, not on what the reads
/// find: the same files whether they are read one at a time or overlapped. Held as the
/// first such files of those seen so far: a file beyond them is dropped as soon as the
/// ones before it reach the budget, and never comes back (the ones kept only get smaller).
struct step_slice {
    data_ledger chosen;
    bool files_beyond = false; ///< a file after the slice: the round goes on
};

awaitable<result<step_slice>> choose_slice(store::store& mirror, std::string const& after, std::uint64_t budget,
                                           ledger_reads const& reads) {
    step_slice slice;
    std::uint64_t planned = 0;
    ledger_visitor choose = [&](data_ledger& entries) -> awaitable<result<void>> {
        for (auto const& [path, entry] : entries) {
            if (path <= after)
                continue;
            slice.chosen.emplace(path, entry);
            planned += entry.bytes;
            while (slice.chosen.size() > 1 && planned - std::prev(slice.chosen.end())->second.bytes >= budget) {
                planned -= std::prev(slice.chosen.end())->second.bytes;
                slice.chosen.erase(std::prev(slice.chosen.end()));
                slice.files_beyond = true;
            }
        }
        co_return result<void>();
    };
    if (auto walked = co_await for_each_new_ledger_entries(mirror, choose, reads); !walked)
        co_return with_context(walked.error(), "mirror");
    co_return slice;
}

} // namespace

awaitable<scrub_step_report> scrub_step(store::store& mirror, scrub_position& position, double fraction,
                                        io::blocking_pool* pool, double now, std::size_t concurrency,
                                        transfer_slots* shared, std::size_t memory) {
    scrub_step_report report;
    auto data_dir = co_await load_mirror_data_dir(mirror);
    if (!data_dir) {
        report.failure = data_dir.error();
        co_return report;
    }
    // The ledger is walked twice, a segment at a time, never held whole: once for what a
    // round covers (this step's share of it), once for the files of this step's slice.
    ledger_visitor count = [&](data_ledger& entries) -> awaitable<result<void>> {
        for (auto const& [path, entry] : entries) {
            report.ledger_files += 1;
            report.ledger_bytes += entry.bytes;
        }
        co_return result<void>();
    };
    ledger_reads const reads{concurrency, shared, memory};
    if (auto counted = co_await for_each_new_ledger_entries(mirror, count, reads); !counted) {
        report.failure = with_context(counted.error(), "mirror");
        co_return report;
    }
    if (position.round_started == 0)
        position.round_started = now;
    // This step's share of a round; a file is never cut, so the step may read a little more.
    double const share = std::ceil(static_cast<double>(report.ledger_bytes) * std::clamp(fraction, 0.0, 1.0));
    std::uint64_t const budget = static_cast<std::uint64_t>(std::max(1.0, share));
    auto chosen = co_await choose_slice(mirror, position.after, budget, reads);
    if (!chosen) {
        report.failure = chosen.error();
        co_return report;
    }
    bool const files_beyond = chosen->files_beyond;
    std::vector<data_ledger::const_iterator> slice;
    for (auto it = chosen->chosen.begin(); it != chosen->chosen.end(); ++it)
        slice.push_back(it);
    // Up to `concurrency` reads in flight, each verdict in its file's slot. A read that
    // fails for another reason than the file stops the pulling of more: every file before
    // it in name order has been pulled already, so the walk below sees what a read at a
    // time would have.
    std::vector<checked_file> checked(slice.size());
    std::size_t pulled = 0;
    bool broken = false;
    std::function<awaitable<void>()> worker = [&]() -> awaitable<void> {
        while (pulled < slice.size() && !broken) {
            std::size_t const i = pulled++;
            auto const& [path, entry] = *slice[i];
            std::string key = *data_dir + path;
            expectation expect{entry.bytes, entry.sha256, "the mirror's ledger"};
            transfer_slots::slot slot;
            if (shared != nullptr)
                slot = co_await shared->acquire();
            auto hashed = co_await hash_object(mirror, key, expect, pool);
            checked[i].done = true;
            if (hashed)
                continue;
            checked[i].problem = hashed.error();
            if (!is_finding(as_content_error(hashed.error())))
                broken = true;
        }
    };
    co_await run_workers(std::min(std::max<std::size_t>(1, concurrency), slice.size()), worker);
    // The position moves over the files checked, in order, up to the first that stopped the step.
    for (std::size_t i = 0; i < slice.size(); ++i) {
        auto const& [path, entry] = *slice[i];
        if (!checked[i].done)
            co_return report; // never: only a file after one that stopped the step is left unread
        if (checked[i].problem) {
            auto problem = as_content_error(*checked[i].problem);
            if (!is_finding(problem)) {
                report.failure = with_context(*checked[i].problem, "mirror");
                co_return report; // the same file first next time
            }
            report.findings.push_back(error{problem.code, "mirror: " + problem.message});
        }
        report.files += 1;
        report.bytes += entry.bytes;
        position.round_bytes += entry.bytes;
        position.after = path;
    }
    if (!files_beyond) {
        report.round_completed = true;
        position.last_round_completed = now;
        position.after.clear();
        position.round_started = 0;
        position.round_bytes = 0;
    }
    co_return report;
}

} // namespace mirror::sync
