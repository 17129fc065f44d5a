#pragma once
// The only switch on a location's scheme: which backend serves it.

#include "core/store/store.hpp"

#include <memory>
#include <string_view>

namespace mirror::store {

enum class store_role { origin, mirror };

/// Opens the store a location names: a folder path or a `file://` URL. `http(s)://` and
/// `s3://` are refused with store_errc::unsupported ("not supported yet"), as is any other
/// scheme. A mirror is opened writable (its folder created when absent); an origin
/// read-only, and it must exist.
result<std::unique_ptr<store>> open_store(std::string_view location, store_role role);

} // namespace mirror::store
