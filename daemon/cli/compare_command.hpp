#pragma once
// `fdl-mirror compare LOCATION LOCATION...`: copies of one repository compared
// (core/attest/compare.hpp), printed as a table of refs and a list of findings.

#include "core/store/open_store.hpp"
#include "daemon/cli/cli.hpp"

namespace mirror::daemon {

/// Runs the command with every store opened with `options`. Exit status: 0 the copies
/// agree (and none is further behind than --max-lag); 1 a divergence, or lag past
/// --max-lag; 2 a usage problem (an unreadable --attestation-signers file, a location no
/// store serves); 3 a location that could not be read.
int run_compare(compare_command const& cmd, store::store_options const& options);

} // namespace mirror::daemon
