#include "daemon/metrics/metric_series.hpp"

#include "core/sync/errors.hpp"
#include "daemon/common/terminal_text.hpp"
#include "verify/errors.hpp"

#include <algorithm>
#include <string_view>
#include <tuple>

namespace mirror::daemon {

std::string ref_label(std::string const& name) { return terminal_safe(name, false); }

std::vector<sync::ref_state const*> refs_with_series(std::vector<sync::ref_state> const& refs,
                                                     std::map<std::string, double> const& lag, std::size_t max) {
    std::vector<sync::ref_state const*> out;
    for (auto const& state : refs)
        out.push_back(&state);
    if (out.size() <= max)
        return out;
    auto lag_of = [&](sync::ref_state const* s) {
        auto it = lag.find(s->name);
        return it == lag.end() ? 0.0 : it->second;
    };
    std::sort(out.begin(), out.end(), [&](auto* a, auto* b) {
        return std::make_tuple(a->in_sync(), -static_cast<double>(a->versions_behind), -lag_of(a), a->name) <
               std::make_tuple(b->in_sync(), -static_cast<double>(b->versions_behind), -lag_of(b), b->name);
    });
    out.resize(max);
    return out;
}

std::vector<ref_record const*> refs_with_clocks(std::vector<ref_record> const& refs, std::size_t max) {
    std::vector<ref_record const*> out;
    for (auto const& ref : refs)
        out.push_back(&ref);
    std::sort(out.begin(), out.end(), [](auto* a, auto* b) {
        return std::make_tuple(!a->behind_since, a->behind_since.value_or(0), a->name) <
               std::make_tuple(!b->behind_since, b->behind_since.value_or(0), b->name);
    });
    if (out.size() > max)
        out.resize(max);
    return out;
}

std::vector<held_record const*> oldest_held(std::vector<held_record> const& held, std::size_t max) {
    std::vector<held_record const*> out;
    for (auto const& h : held)
        out.push_back(&h);
    std::sort(out.begin(), out.end(),
              [](auto* a, auto* b) { return std::tie(a->since, a->version) < std::tie(b->since, b->version); });
    if (out.size() > max)
        out.resize(max);
    return out;
}

char const* signature_result_of(boost::system::error_code const& code) {
    if (code == verify::verify_errc::missing_signature)
        return "missing";
    if (code == verify::verify_errc::untrusted_key || code == verify::verify_errc::principal_not_allowed ||
        code == verify::verify_errc::namespace_not_allowed || code == verify::verify_errc::outside_validity)
        return "untrusted";
    return "invalid";
}

bool is_integrity_failure(boost::system::error_code const& code) {
    if (code.category() == verify::verify_category() || code.category().name() == std::string_view("store"))
        return false;
    return code != sync::sync_errc::ancestor_held;
}

} // namespace mirror::daemon
