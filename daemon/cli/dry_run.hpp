#pragma once
// `run --config FILE --once --dry-run`: what one pass of every configured repository would
// do, read from its origin and its mirror with the daemon's store settings, and nothing
// written anywhere (the mirror's store refuses every write besides).

#include <string>

namespace mirror::daemon {

/// Prints each repository's plan (versions to publish, refs to create or move) on stdout;
/// returns 0 when every repository could be planned, 1 when one could not (its reason on
/// stderr), 78 when the configuration does not load.
int run_dry(std::string const& config_path);

} // namespace mirror::daemon
