#pragma once
// UUIDv7 version IDs for test repositories: increasing, so creation order is ID order.

#include <string>

namespace mirror::test {

/// A fresh lower-case UUIDv7; each call's timestamp is later than the previous call's.
std::string next_version_id();

} // namespace mirror::test
