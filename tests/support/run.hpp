#pragma once
// Running the engine from tests: one pass or one audit between folders.

#include "core/net.hpp"
#include "core/store/store.hpp"
#include "core/sync/audit.hpp"
#include "core/sync/sync_pass.hpp"

#include <filesystem>

namespace mirror::test {

/// Runs a coroutine to completion on a fresh io_context; rethrows what escapes it.
sync::sync_report run(awaitable<sync::sync_report> work);
sync::audit_report run(awaitable<sync::audit_report> work);

/// One sync pass from one folder to another.
sync::sync_report sync_folders(std::filesystem::path const& origin, std::filesystem::path const& mirror,
                               sync::sync_options options = {});
/// One pass through given stores (decorated by the test).
sync::sync_report sync_stores(store::store& origin, store::store& mirror, sync::sync_options options = {});
/// An audit of a folder.
sync::audit_report audit_folder(std::filesystem::path const& root);

/// Opens a folder as a store (writable when `writable`); throws when it cannot.
std::unique_ptr<store::store> open_folder(std::filesystem::path const& root, bool writable);

/// The report's held reasons, violations and fatal error, one per line, for messages.
std::string describe(sync::sync_report const& report);

} // namespace mirror::test
