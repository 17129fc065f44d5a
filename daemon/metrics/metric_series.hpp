#pragma once
// Which series a pass's report makes, and their label values: the choices of
// daemon/metrics/metrics.cpp that need no Prometheus (and are tested without it).

#include "core/sync/report.hpp"
#include "daemon/state/pass_record.hpp"

#include <boost/system/error_code.hpp>

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace mirror::daemon {

/// A ref name as a label value: an origin chooses it, so what would act on a terminal (or
/// reorder what a person reads on a dashboard) is written as a visible escape.
std::string ref_label(std::string const& name);

/// The refs that get drift series of their own: all of them up to `max`; past that, those
/// out of sync first, the most versions behind and the longest behind (`lag`, seconds by
/// name) first. An origin with 10,000 refs would otherwise cost 40,000 series a scrape.
std::vector<sync::ref_state const*> refs_with_series(std::vector<sync::ref_state> const& refs,
                                                     std::map<std::string, double> const& lag, std::size_t max);

/// The refs of a record that get behind-since series: those behind longest first, then in
/// sync, by name; at most `max`.
std::vector<ref_record const*> refs_with_clocks(std::vector<ref_record> const& refs, std::size_t max);

/// The held versions of a record that get held-since series: the oldest first (by when
/// they were first held, then id); at most `max`.
std::vector<held_record const*> oldest_held(std::vector<held_record> const& held, std::size_t max);

/// The signature_checks result of a held version's verify error: "missing", "untrusted"
/// or "invalid" ("valid" is counted from the signers).
char const* signature_result_of(boost::system::error_code const& code);

/// Whether a held reason says the origin's bytes or records are wrong (not a signature,
/// not the medium, not a consequence of another version being held).
bool is_integrity_failure(boost::system::error_code const& code);

} // namespace mirror::daemon
