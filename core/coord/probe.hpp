#pragma once
// Whether a store's server honours conditional writes, found by trying them: s3rver, for
// one, ignores If-None-Match and If-Match and stores every PUT, which would make leases
// and fenced ref writes silently unconditional.

#include "core/io/net.hpp"
#include "core/store/store.hpp"
#include "verify/error.hpp"

#include <string>

namespace mirror::coord {

/// Writes, overwrites and deletes the object `key` (one of this daemon's own: two probes
/// of one key at once could fool each other): a create-only write must lose to an object
/// there, a write naming a wrong tag must lose, one naming the right tag must win.
/// True when all three held; an error when the store could not be asked.
awaitable<result<bool>> honours_conditional_writes(store::store& mirror, std::string key);

} // namespace mirror::coord
