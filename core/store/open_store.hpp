#pragma once
// The only switch on a location's scheme: which backend serves it.

#include "core/store/blocking_pool.hpp"
#include "core/store/store.hpp"

#include <memory>
#include <string_view>

namespace mirror::store {

enum class store_role { origin, mirror };

/// Opens the store a location names: a folder path or a `file://` URL. `http(s)://` and
/// `s3://` are refused with store_errc::unsupported ("not supported yet"), as is any other
/// scheme. A mirror is opened writable (its folder created when absent); an origin
/// read-only, and it must exist. Blocking file I/O runs on `pool` (which must outlive the
/// store) when one is given.
result<std::unique_ptr<store>> open_store(std::string_view location, store_role role, blocking_pool* pool);

} // namespace mirror::store
