// What a repository job keeps in its mirror besides the repository, under the lease
// (docs/operations.md, "Running several instances"; docs/attestations.md): the clocks the
// alerts read, continued by the next holder, and the mirror's signed attestation.

#include "daemon/service/repository_job.hpp"

#include "daemon/build_info.hpp"
#include "daemon/service/coordinator.hpp"
#include "daemon/state/mirror_clocks.hpp"
#include "daemon/status/status_report.hpp"

#include "core/store/store.hpp"

namespace mirror::daemon {

awaitable<void> repository_job::adopt_attestation() {
    auto const cfg = cfg_;
    if (!cfg->attestation || attester_->adopted() || open_mirror())
        co_return;
    co_await attester_->adopt(*mirror_, *cfg->attestation);
}

awaitable<void> repository_job::attest_mirror(config::daemon_config const& cfg, config::repository_config const& r,
                                              sync::sync_report const& report, double started) {
    bool const leased = lease_ && lease_->in_force(); // an S3 mirror's lease; a folder has its lock
    if (!cfg.attestation || report.fatal || stopping_ || retired_ || (leased && !lease_->held()) || open_mirror())
        co_return; // only what a completed pass verified, by the daemon that may write
    auto trust = load_trust(r);
    if (!trust)
        co_return; // the pass reported it
    attestation_pass pass;
    pass.origin = r.origin;
    pass.mirror = r.mirror;
    pass.trust = &*trust;
    pass.allowed_signers = r.settings.allowed_signers;
    if (lease_ && lease_->lease() != nullptr)
        pass.fencing_token = lease_->lease()->token();
    pass.instance = services_.coord != nullptr ? services_.coord->instance() : std::string();
    pass.concurrency = r.settings.concurrency;
    pass.tool_version = FDL_MIRROR_VERSION;
    co_await attester_->after_pass(*mirror_, *cfg.attestation, pass, report, static_cast<std::int64_t>(started));
}

awaitable<void> repository_job::continue_mirror_clocks() {
    if (open_mirror())
        co_return; // the pass says why (an origin that cannot be opened does not stop this)
    auto read = co_await store::read_if_present(*mirror_, std::string(clocks_key), mirror_clocks::max_bytes);
    if (!read || !*read) {
        if (!read)
            services_.log->warning(name_, "the clocks of the previous holder were not read (this daemon's own "
                                          "go on): " + read.error().message);
        co_return;
    }
    auto clocks = parse_clocks(**read, mirror_->describe() + std::string(clocks_key));
    if (!clocks) {
        services_.log->warning(name_, "the clocks of the previous holder are not readable (this daemon's own go "
                                      "on): " + clocks.error().message);
        co_return;
    }
    if (*clocks == clocks_of(state_))
        co_return;
    adopt_clocks(state_, *clocks);
    written_clocks_ = *clocks;
    services_.stats->set_failing_since(name_, state_.failing_since);
    services_.log->info(name_, "continuing the clocks kept in the mirror: " +
                                   (clocks->failing_since ? std::string("failing since ") +
                                                                utc_time(*clocks->failing_since) + ", "
                                                          : std::string()) +
                                   std::to_string(clocks->behind_since.size()) + " ref(s) behind, " +
                                   std::to_string(clocks->held_since.size()) + " version(s) held");
    save_state();
}

awaitable<void> repository_job::keep_mirror_clocks() {
    if (!lease_ || !lease_->held() || stopping_ || open_mirror())
        co_return; // a folder mirror has one daemon, whose state folder keeps them
    auto clocks = clocks_of(state_);
    if (written_clocks_ && *written_clocks_ == clocks)
        co_return; // no clock started or stopped: no write
    auto written = co_await store::write_all(*mirror_, std::string(clocks_key),
                                             render_clocks(clocks, services_.coord->holder(), record_now()),
                                             store::write_mode::replace);
    if (!written) {
        services_.log->debug(name_, "clocks not kept in the mirror (the next pass tries again): " +
                                        written.error().message);
        co_return;
    }
    written_clocks_ = std::move(clocks);
}

} // namespace mirror::daemon
