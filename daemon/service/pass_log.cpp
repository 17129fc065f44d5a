#include "daemon/service/pass_log.hpp"

#include "core/sync/errors.hpp"

#include <cstdio>

namespace mirror::daemon {

namespace {

std::string plural(std::uint64_t n, char const* one, char const* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string size_text(std::uint64_t bytes) {
    char text[32];
    if (bytes < 1024)
        std::snprintf(text, sizeof text, "%llu B", static_cast<unsigned long long>(bytes));
    else if (bytes < 1024 * 1024)
        std::snprintf(text, sizeof text, "%.1f KiB", static_cast<double>(bytes) / 1024);
    else if (bytes < 1024ull * 1024 * 1024)
        std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1024 * 1024));
    else
        std::snprintf(text, sizeof text, "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
    return text;
}

std::string seconds_text(double seconds) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f s", seconds);
    return text;
}

} // namespace

std::string pass_summary(sync::sync_report const& report, finished_pass const& pass) {
    std::string out = std::string("pass ") + to_string(pass.outcome) + " in " + seconds_text(pass.duration_seconds);
    if (report.fatal)
        return out + ": " + report.fatal->message;
    out += ": " + plural(report.published.size(), "version", "versions") + " published, " +
           plural(report.files_copied, "file", "files") + " (" + size_text(report.bytes_copied) + ") copied";
    if (!report.held.empty())
        out += ", " + plural(report.held.size(), "version", "versions") + " held";
    if (!report.violations.empty())
        out += ", " + plural(report.violations.size(), "violation", "violations");
    if (!report.unverified.empty())
        out += ", " + plural(report.unverified.size(), "version", "versions") + " in the mirror not accepted by the policy";
    if (!report.published_with_problems.empty())
        out += ", " + plural(report.published_with_problems.size(), "problem", "problems") + " of published versions";
    std::size_t in_sync = 0;
    for (auto const& ref : report.refs)
        in_sync += ref.in_sync() ? 1 : 0;
    out += "; " + std::to_string(in_sync) + " of " + plural(report.refs.size(), "ref", "refs") + " in sync";
    if (report.pending_files != 0)
        out += "; " + plural(report.pending_files, "data file", "data files") + " (" + size_text(report.pending_bytes) +
               ") pending";
    if (report.io_failure)
        out += "; reads or writes failed (see above)";
    return out;
}

void log_pass(logger const& log, std::string const& repo, sync::sync_report const& report, finished_pass const& pass,
              std::set<std::string> const& known_violations) {
    using config::log_level;
    using field = log_field;
    for (auto const& id : report.published)
        log.write({log_level::info, repo, id, "published"});
    for (auto const& change : report.refs_updated) {
        std::string text = "ref " + change.name + " " + (change.from ? *change.from + " -> " : "created at ") + change.to;
        field const fields[] = {{"ref", std::string_view(change.name)},
                                {"from", std::string_view(change.from ? *change.from : std::string())},
                                {"to", std::string_view(change.to)}};
        log.write({log_level::info, repo, {}, text, fields});
    }
    for (auto const& id : report.followed)
        log.write({log_level::info, repo, {}, "followed: " + id});
    auto with_kind = [&](log_level level, std::string_view version, std::string const& text, error const& why) {
        std::string kind = sync::kind_of(why.code);
        field const fields[] = {{"error_kind", std::string_view(kind)}};
        log.write({level, repo, version, text, fields});
    };
    for (auto const& held : report.held)
        with_kind(log_level::warning, held.id, "held: " + held.why.message, held.why);
    for (auto const& problem : report.published_with_problems)
        with_kind(log_level::warning, problem.id, "published with a problem: " + problem.why.message, problem.why);
    for (auto const& unverified : report.unverified)
        with_kind(log_level::error, unverified.id,
                  "in the mirror, but its signature is not accepted now: " + unverified.why.message, unverified.why);
    for (auto const& violation : report.violations) {
        auto const subject = sync::subject_of(violation);
        std::string const kind = sync::kind_of(violation.code);
        bool const known = known_violations.contains(violation.message);
        std::vector<field> fields{{"error_kind", std::string_view(kind)}};
        if (!subject.ref.empty())
            fields.push_back({"ref", std::string_view(subject.ref)});
        log.write({known ? log_level::debug : log_level::error, repo, subject.version,
                   (known ? "immutability violation, still: " : "immutability violation: ") + violation.message,
                   fields});
    }
    for (auto const& warning : report.warnings)
        log.write({log_level::warning, repo, {}, warning});
    log_level level = log_level::info;
    if (pass.outcome == pass_outcome::held)
        level = log_level::warning;
    else if (pass.outcome == pass_outcome::failed || pass.outcome == pass_outcome::timeout)
        level = log_level::error;
    std::uint64_t in_sync = 0;
    for (auto const& ref : report.refs)
        in_sync += ref.in_sync() ? 1 : 0;
    std::string const kind = report.fatal ? sync::kind_of(report.fatal->code) : std::string();
    field const summary[] = {{"outcome", std::string_view(to_string(pass.outcome))},
                             {"duration_seconds", pass.duration_seconds},
                             {"versions_published", std::uint64_t{report.published.size()}},
                             {"versions_held", std::uint64_t{report.held.size()}},
                             {"violations", std::uint64_t{report.violations.size()}},
                             {"files_copied", report.files_copied},
                             {"bytes_copied", report.bytes_copied},
                             {"refs", std::uint64_t{report.refs.size()}},
                             {"refs_in_sync", in_sync},
                             {"pending_files", report.pending_files},
                             {"pending_bytes", report.pending_bytes},
                             {"error_kind", std::string_view(kind)}};
    // The error kind only when there is one.
    log.write({level, repo, {}, pass_summary(report, pass), std::span(summary).first(kind.empty() ? 11 : 12)});
}

} // namespace mirror::daemon
