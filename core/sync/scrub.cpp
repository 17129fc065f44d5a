#include "core/sync/scrub.hpp"

#include "core/store/errors.hpp"
#include "core/sync/copy.hpp"
#include "core/sync/errors.hpp"
#include "core/sync/ledger.hpp"

#include <cmath>

namespace mirror::sync {

namespace {

/// A failed read says something about the file (a finding) rather than about the way to it.
bool is_finding(error const& e) {
    return e.code == sync_errc::size_mismatch || e.code == sync_errc::sha256_mismatch ||
           e.code == sync_errc::missing_file || e.code == sync_errc::not_a_regular_file;
}

} // namespace

awaitable<scrub_step_report> scrub_step(store::store& mirror, scrub_position& position, double fraction,
                                        store::blocking_pool* pool, double now) {
    scrub_step_report report;
    auto loaded = co_await load_mirror_ledger(mirror);
    if (!loaded) {
        report.failure = loaded.error();
        co_return report;
    }
    auto const& ledger = loaded->files;
    for (auto const& [path, entry] : ledger) {
        report.ledger_files += 1;
        report.ledger_bytes += entry.bytes;
    }
    if (position.round_started == 0)
        position.round_started = now;
    // This step's share of a round; a file is never cut, so the step may read a little more.
    double const share = std::ceil(static_cast<double>(report.ledger_bytes) * std::clamp(fraction, 0.0, 1.0));
    std::uint64_t const budget = static_cast<std::uint64_t>(std::max(1.0, share));
    auto next = ledger.upper_bound(position.after);
    while (next != ledger.end() && (report.files == 0 || report.bytes < budget)) {
        auto const& [path, entry] = *next;
        std::string key = loaded->data_dir + path;
        expectation expect{entry.bytes, entry.sha256, "the mirror's ledger"};
        auto hashed = co_await hash_object(mirror, key, expect, pool);
        if (!hashed) {
            auto problem = as_content_error(hashed.error());
            if (!is_finding(problem)) {
                report.failure = with_context(hashed.error(), "mirror");
                co_return report; // the same file first next time
            }
            report.findings.push_back(error{problem.code, "mirror: " + problem.message});
        }
        report.files += 1;
        report.bytes += entry.bytes;
        position.round_bytes += entry.bytes;
        position.after = path;
        ++next;
    }
    if (next == ledger.end()) {
        report.round_completed = true;
        position.last_round_completed = now;
        position.after.clear();
        position.round_started = 0;
        position.round_bytes = 0;
    }
    co_return report;
}

} // namespace mirror::sync
