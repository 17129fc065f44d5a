#include "daemon/cli/compare_command.hpp"

#include "daemon/cli/report_output.hpp"
#include "daemon/common/terminal_text.hpp"
#include "daemon/service/pass_setup.hpp"

#include "core/attest/compare.hpp"
#include "core/attest/statement.hpp"
#include "core/io/blocking_pool.hpp"
#include "core/io/errors.hpp"
#include "verify/allowed_signers.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <iterator>

namespace mirror::daemon {

namespace json = boost::json;

namespace {

constexpr int exit_usage = 2, exit_io = 3;

/// As main.cpp's: a location that cannot name a store is the operator's mistake.
bool is_usage_problem(error const& e) {
    return e.code == io::store_errc::unsupported || e.code == io::store_errc::rejected ||
           e.code == io::store_errc::not_a_file;
}

template <class T>
T run_on(net::io_context& io, awaitable<T> work) {
    std::optional<T> out;
    net::co_spawn(io, std::move(work), [&](std::exception_ptr e, T value) {
        if (e)
            std::rethrow_exception(e);
        out = std::move(value);
    });
    io.restart();
    io.run();
    return std::move(*out);
}

std::string short_id(std::optional<std::string> const& id) {
    if (!id)
        return "-";
    return id->size() > 13 ? id->substr(0, 13) + "…" : *id;
}

std::string summary_of(std::vector<attest::location_state> const& states, attest::comparison const& c,
                       std::vector<std::string> const& failures, std::optional<std::uint64_t> max_lag) {
    std::string out = "compare " + std::to_string(states.size() + failures.size()) + " location(s):\n";
    for (std::size_t i = 0; i < states.size(); ++i) {
        auto const& s = states[i];
        out += "  [" + std::to_string(i + 1) + "] " + s.name + ": repository " + s.repository_id.value_or("(no id)") +
               ", " + std::to_string(s.versions.size()) + " version(s), " + std::to_string(s.refs.size()) +
               " ref(s), " +
               (s.from_attestation ? "from its attestation (made " + attest::utc_time_text(*s.attested_at) + ")"
                                   : std::string("from its records")) +
               (s.partial ? ", partial: " + sync::describe_partial(*s.partial) : std::string()) + "\n";
    }
    for (auto const& failure : failures)
        out += "  unreadable: " + failure + "\n";
    for (auto const& row : c.refs) {
        out += row.name + ":";
        for (std::size_t i = 0; i < row.targets.size(); ++i) {
            out += " [" + std::to_string(i + 1) + "] " + short_id(row.targets[i]);
            if (row.behind[i] && *row.behind[i] > 0 && row.targets[i])
                out += " (" + std::to_string(*row.behind[i]) + " behind)";
        }
        out += "\n";
    }
    out += std::to_string(c.versions_in_several) + " version(s) held by more than one location, compared";
    out += c.data_files_in_several > 0 ? "; " + std::to_string(c.data_files_in_several) +
                                             " data file(s) recorded by more than one mirror's ledger\n"
                                       : "\n";
    for (auto const& d : c.divergences)
        out += "divergence: " + d + "\n";
    for (auto const& l : c.lags)
        out += "lag: " + l + "\n";
    for (auto const& n : c.not_followed)
        out += "partial: " + n + "\n";
    std::uint64_t most = 0;
    for (auto b : c.most_behind)
        most = std::max(most, b);
    out += "result: " + std::to_string(c.divergences.size()) + " divergence(s), " + std::to_string(c.lags.size()) +
           " ref(s) behind somewhere (the most: " + std::to_string(most) + " version(s)" +
           (max_lag ? std::string(most > *max_lag ? ", over --max-lag " : ", within --max-lag ") +
                          std::to_string(*max_lag)
                    : std::string()) +
           ")\n";
    return out;
}

std::string json_of(std::vector<attest::location_state> const& states, attest::comparison const& c,
                    std::vector<std::string> const& failures, int status) {
    json::array locations;
    for (std::size_t i = 0; i < states.size(); ++i) {
        auto const& s = states[i];
        json::object o{{"location", s.name},
                       {"versions", s.versions.size()},
                       {"refs", s.refs.size()},
                       {"from_attestation", s.from_attestation},
                       {"most_behind", c.most_behind[i]}};
        o["repository_id"] = s.repository_id ? json::value(*s.repository_id) : json::value(nullptr);
        o["partial"] = s.partial ? json::value(sync::describe_partial(*s.partial)) : json::value(nullptr);
        locations.push_back(std::move(o));
    }
    json::array refs;
    for (auto const& row : c.refs) {
        json::array targets, behind;
        for (std::size_t i = 0; i < row.targets.size(); ++i) {
            targets.push_back(row.targets[i] ? json::value(*row.targets[i]) : json::value(nullptr));
            behind.push_back(row.behind[i] ? json::value(*row.behind[i]) : json::value(nullptr));
        }
        refs.push_back(json::object{{"name", row.name}, {"targets", std::move(targets)}, {"behind", std::move(behind)}});
    }
    json::object out{{"command", "compare"},
                     {"exit_code", status},
                     {"peak_rss_bytes", peak_rss_bytes()},
                     {"locations", std::move(locations)},
                     {"unreadable", json::array(failures.begin(), failures.end())},
                     {"refs", std::move(refs)},
                     {"versions_compared", c.versions_in_several},
                     {"data_files_compared", c.data_files_in_several},
                     {"divergences", json::array(c.divergences.begin(), c.divergences.end())},
                     {"lags", json::array(c.lags.begin(), c.lags.end())},
                     {"not_followed", json::array(c.not_followed.begin(), c.not_followed.end())}};
    return json::serialize(out) + "\n";
}

} // namespace

int run_compare(compare_command const& cmd, store::store_options const& options) {
    std::optional<verify::allowed_signers> trusted;
    if (cmd.attestation_signers) {
        std::ifstream in(*cmd.attestation_signers, std::ios::binary);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        auto parsed = verify::parse_allowed_signers(text, *cmd.attestation_signers);
        if (!in.is_open() || in.bad() || !parsed) {
            print_error("--attestation-signers: " +
                        (parsed ? *cmd.attestation_signers + ": cannot be read" : parsed.error().message));
            return exit_usage;
        }
        trusted = std::move(*parsed);
    }
    net::io_context io(1);
    io::blocking_pool pool(2);
    std::vector<std::unique_ptr<store::store>> opened;
    for (auto const& location : cmd.locations) {
        auto store = store::open_store(location, store::store_role::origin, &pool, options);
        if (!store) {
            print_error("compare: " + shown_location(location) + ": " + store.error().message);
            return is_usage_problem(store.error()) ? exit_usage : exit_io;
        }
        opened.push_back(std::move(*store));
    }
    attest::read_settings settings;
    settings.trusted = trusted ? &*trusted : nullptr;
    settings.ns = cmd.attestation_namespace;
    settings.now = static_cast<std::int64_t>(std::time(nullptr));
    settings.concurrency = cmd.concurrency;
    // As sync's split: what is not DuckDB's is the budget the reads draw on.
    auto const budget = split_memory_limit(cmd.memory_limit).transfers;
    settings.ledger_memory = budget / 4;
    settings.max_attestation_bytes = attest::attestation_limit(budget);
    std::vector<attest::location_state> states;
    std::vector<store::store*> stores;
    std::vector<std::string> failures;
    for (std::size_t i = 0; i < opened.size(); ++i) {
        auto read = run_on(io, attest::read_location(*opened[i], shown_location(cmd.locations[i]), settings));
        if (!read) {
            failures.push_back(shown_location(cmd.locations[i]) + ": " + read.error().message);
            continue;
        }
        states.push_back(std::move(*read));
        stores.push_back(opened[i].get());
    }
    auto compared = run_on(io, attest::compare_locations(states, stores));
    std::uint64_t most = 0;
    for (auto b : compared.most_behind)
        most = std::max(most, b);
    int status = !failures.empty() ? exit_io
                 : !compared.divergences.empty() || (cmd.max_lag && most > *cmd.max_lag) ? 1
                                                                                          : 0;
    std::string out = cmd.json ? json_of(states, compared, failures, status)
                               : terminal_safe(summary_of(states, compared, failures, cmd.max_lag), true);
    std::fwrite(out.data(), 1, out.size(), stdout);
    return status;
}

} // namespace mirror::daemon
