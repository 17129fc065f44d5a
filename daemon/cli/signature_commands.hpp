#pragma once
// check-signature and find-principals: SSH signature checks from the shell, with the
// verdicts `ssh-keygen -Y verify` and `-Y find-principals` would give.

#include "daemon/cli/cli.hpp"

namespace mirror::daemon {

/// Reads the message from standard input. Prints "Good "NS" signature for PRINCIPAL with
/// TYPE key FINGERPRINT" and returns 0 when accepted; otherwise prints why on standard
/// error and returns 1 (2 for usage errors, such as a bad --verify-time).
int run_check_signature(check_signature_command const& cmd);

/// Prints the principals field of the first accepting line, as ssh-keygen does, and
/// returns 0; when no line accepts, says why on standard error and returns 1.
int run_find_principals(find_principals_command const& cmd);

} // namespace mirror::daemon
