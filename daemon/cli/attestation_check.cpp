#include "daemon/cli/attestation_check.hpp"

#include "core/attest/check.hpp"
#include "core/attest/errors.hpp"
#include "core/sync/errors.hpp"
#include "verify/allowed_signers.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <ctime>
#include <fstream>
#include <iterator>

namespace mirror::daemon {

namespace json = boost::json;

namespace {

attestation_outcome unusable_file(std::string const& why) {
    attestation_outcome out;
    out.status = 2;
    out.summary = "attestation: not checked: " + why + "\n";
    out.json = json::serialize(json::object{{"ok", false}, {"problems", json::array{json::object{
                                                                          {"kind", "usage"}, {"message", why}}}}});
    return out;
}

json::value time_json(std::int64_t seconds) { return json::value(attest::utc_time_text(seconds)); }

} // namespace

attestation_outcome check_attestation_of(net::io_context& io, store::store& repo, attestation_request const& request) {
    std::ifstream in(request.signers_file, std::ios::binary);
    if (!in)
        return unusable_file("--attestation-signers: " + request.signers_file + ": cannot be read");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto trusted = verify::parse_allowed_signers(text, request.signers_file);
    if (!trusted)
        return unusable_file("--attestation-signers: " + trusted.error().message);
    attest::check_settings settings;
    settings.trusted = std::move(*trusted);
    settings.ns = request.ns;
    settings.max_age = request.max_age;
    settings.now = static_cast<std::int64_t>(std::time(nullptr));
    settings.concurrency = request.concurrency;
    settings.max_bytes = request.max_bytes;
    std::optional<attest::check_report> report;
    net::co_spawn(io, attest::check_attestation(repo, settings), [&](std::exception_ptr e, attest::check_report r) {
        if (e)
            std::rethrow_exception(e);
        report = std::move(r);
    });
    io.restart();
    io.run();

    attestation_outcome out;
    bool unreadable = false;
    json::array problems;
    for (auto const& problem : report->problems) {
        unreadable = unreadable || problem.code.category() != attest::attest_category();
        problems.push_back(json::object{{"kind", sync::kind_of(problem.code)}, {"message", problem.message}});
    }
    out.status = report->ok() ? 0 : unreadable ? 3 : 1;
    json::object o{{"ok", report->ok()}, {"problems", std::move(problems)}};
    o["refs_checked"] = report->refs_checked;
    o["versions_checked"] = report->versions_checked;
    if (report->signer)
        o["signer"] = json::object{{"principals", report->signer->principals},
                                   {"fingerprint", report->signer->fingerprint},
                                   {"allowed_signers_line", report->signer->line}};
    else
        o["signer"] = nullptr;
    if (auto const& s = report->statement) {
        o["attested_at"] = time_json(s->attested_at);
        o["verified_at"] = time_json(s->verified_at);
        o["expires"] = time_json(s->expires);
        o["instance"] = s->instance;
        o["origin"] = s->origin;
        o["repository_id"] = s->repository_id;
    }
    out.json = json::serialize(o);

    if (report->ok()) {
        auto const& s = *report->statement;
        out.summary = "attestation: accepted: signed by " + report->signer->principals + " (" +
                      report->signer->fingerprint + "), made " + attest::utc_time_text(s.attested_at) +
                      " by " + (s.instance.empty() ? std::string("a daemon") : s.instance) +
                      ", mirror verified against " + s.origin + " at " + attest::utc_time_text(s.verified_at) +
                      ", expires " + attest::utc_time_text(s.expires) + "; " + std::to_string(report->refs_checked) +
                      " ref(s) and " + std::to_string(report->versions_checked) + " version(s) as attested\n";
    } else {
        out.summary = "attestation: REFUSED (" + std::to_string(report->problems.size()) + " problem(s))\n";
        for (auto const& problem : report->problems)
            out.summary += "  " + sync::kind_of(problem.code) + ": " + problem.message + "\n";
    }
    return out;
}

} // namespace mirror::daemon
