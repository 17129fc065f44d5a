#pragma once
// `verify --config FILE --repository NAME [--origin]`: the audit of a configured
// repository's mirror (or origin) with the store settings, keys and policy the daemon's
// configuration gives it, so that an operator's audit checks what the daemon checks.

#include "core/store/open_store.hpp"
#include "daemon/cli/cli.hpp"
#include "verify/signature_policy.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <variant>

namespace mirror::daemon {

struct configured_audit {
    std::string location; ///< the repository's mirror, or its origin with --origin
    store::store_options options;
    verify::trust_settings trust;
    std::optional<std::string> allowed_signers; ///< the file `trust`'s keys were read from, if any
    std::size_t concurrency = default_concurrency; ///< data files checked at once: the repository's `concurrency`
};

/// The audit `cmd` asks for, or the exit status after the reason was printed: 78 for a
/// configuration that does not load or a key file that cannot be read, 2 for a
/// repository the configuration lacks.
std::variant<configured_audit, int> configured_audit_of(verify_command const& cmd);

} // namespace mirror::daemon
