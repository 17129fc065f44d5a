#pragma once
// Running the engine from tests: one pass or one audit between folders.

#include "core/io/net.hpp"
#include "core/store/store.hpp"
#include "core/sync/audit.hpp"
#include "core/sync/sync_pass.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <exception>
#include <filesystem>
#include <optional>

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

/// Runs coroutines one after another on one io_context that outlives the stores a test
/// keeps across them (an HTTP or S3 store keeps connections bound to it). Declare it
/// before those stores.
struct event_loop {
    net::io_context io{1};
    template <class T>
    T operator()(awaitable<T> work) {
        std::optional<T> out;
        std::exception_ptr failure;
        net::co_spawn(io, std::move(work), [&](std::exception_ptr e, T value) {
            failure = e;
            if (!e)
                out = std::move(value);
        });
        io.restart();
        io.run();
        if (failure)
            std::rethrow_exception(failure);
        return std::move(*out);
    }
};

} // namespace mirror::test
