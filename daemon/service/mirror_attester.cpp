#include "daemon/service/mirror_attester.hpp"

#include "daemon/common/log.hpp"
#include "daemon/metrics/metrics.hpp"

#include "core/attest/envelope.hpp"
#include "core/attest/statement.hpp"
#include "verify/sha256.hpp"
#include "verify/signing_key.hpp"

#include <ctime>
#include <fstream>
#include <iterator>

namespace mirror::daemon {

namespace {

/// The sha256 of the file's bytes, "" when it cannot be read (the statement then names none).
std::string file_sha256(std::filesystem::path const& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return {};
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return in.bad() ? std::string() : verify::to_hex(verify::sha256_of(bytes));
}

bool changed_the_mirror(sync::sync_report const& report) {
    return !report.published.empty() || !report.refs_updated.empty() || !report.followed.empty();
}

} // namespace

mirror_attester::mirror_attester(std::string repository, logger const& log, metrics& stats, std::size_t max_bytes)
    : repository_(std::move(repository)), log_(log), stats_(stats), max_bytes_(max_bytes) {}

void mirror_attester::forget() {
    memory_.reset();
    last_written_.reset();
    adopted_ = false;
}

awaitable<void> mirror_attester::adopt(store::store& mirror, config::attestation_settings const& settings) {
    adopted_ = true;
    auto key = verify::signing_key::load(settings.key_file);
    if (!key)
        co_return; // the next attestation says why
    auto text = co_await store::read_if_present(mirror, std::string(attest::attestation_key), max_bytes_);
    if (!text || !*text)
        co_return;
    auto statement = attest::own_statement(**text, *key, settings.ns);
    if (!statement)
        co_return; // another key's, or damaged: nothing of it is taken
    auto const& s = *statement;
    stats_.attestation_written(repository_, static_cast<double>(s.attested_at), static_cast<double>(s.expires),
                               std::chrono::duration<double>(settings.interval).count(),
                               std::chrono::duration<double>(settings.validity).count());
}

awaitable<void> mirror_attester::after_pass(store::store& mirror, config::attestation_settings const& settings,
                                            attestation_pass const& pass, sync::sync_report const& report,
                                            std::int64_t verified_at) {
    auto const now = static_cast<std::int64_t>(std::time(nullptr));
    auto const interval = std::chrono::duration_cast<std::chrono::seconds>(settings.interval).count();
    auto const validity = std::chrono::duration_cast<std::chrono::seconds>(settings.validity);
    if (last_written_ && !changed_the_mirror(report) && now - *last_written_ < interval)
        co_return;
    auto key = verify::signing_key::load(settings.key_file);
    if (!key) {
        stats_.attestation_failed(repository_);
        log_.error(repository_, "mirror not attested: " + key.error().message);
        co_return;
    }
    if (key->fingerprint() != last_key_ || !memory_) {
        // What this key attested before (this daemon before a restart, or another holder
        // with the same key) spares reading every version again.
        auto remembered = co_await attest::remembered_from_mirror(mirror, *key, settings.ns, max_bytes_);
        memory_ = std::move(remembered);
        last_key_ = key->fingerprint();
    }
    attest::statement_inputs inputs;
    inputs.origin = pass.origin;
    inputs.mirror = pass.mirror;
    inputs.verified_at = verified_at;
    inputs.now = now;
    inputs.validity = validity;
    inputs.trust = pass.trust;
    if (pass.allowed_signers)
        inputs.allowed_signers_sha256 = file_sha256(*pass.allowed_signers);
    inputs.tool_version = pass.tool_version;
    inputs.instance = pass.instance;
    inputs.fencing_token = pass.fencing_token;
    inputs.signers = &report.signers;
    inputs.concurrency = pass.concurrency;
    auto statement = co_await attest::describe_mirror(mirror, inputs, *memory_);
    if (!statement) {
        stats_.attestation_failed(repository_);
        log_.error(repository_, "mirror not attested: " + statement.error().message);
        co_return;
    }
    auto envelope = attest::sign_statement(*statement, *key, settings.ns);
    if (!envelope) {
        stats_.attestation_failed(repository_);
        log_.error(repository_, "mirror not attested: " + envelope.error().message);
        co_return;
    }
    auto written = co_await store::write_all(mirror, std::string(attest::attestation_key), std::move(*envelope),
                                             store::write_mode::replace);
    if (!written) {
        stats_.attestation_failed(repository_);
        log_.warning(repository_, "mirror not attested (the next pass tries again): " + written.error().message);
        co_return;
    }
    last_written_ = now;
    stats_.attestation_written(repository_, static_cast<double>(now), static_cast<double>(statement->expires),
                               static_cast<double>(interval), static_cast<double>(validity.count()));
    log_.debug(repository_, "attested: " + std::to_string(statement->refs.size()) + " ref(s), " +
                                std::to_string(statement->versions.size()) + " version(s), expires " +
                                attest::utc_time_text(statement->expires) + ", signed by " + last_key_);
}

} // namespace mirror::daemon
