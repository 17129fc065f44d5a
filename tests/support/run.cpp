#include "tests/support/run.hpp"

#include "core/store/local_store.hpp"
#include "core/sync/errors.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <stdexcept>

namespace mirror::test {

template <class T>
static T run_any(awaitable<T> work) {
    net::io_context io(1);
    std::optional<T> out;
    std::exception_ptr failure;
    net::co_spawn(io, std::move(work), [&](std::exception_ptr e, T value) {
        failure = e;
        if (!e)
            out = std::move(value);
    });
    io.run();
    if (failure)
        std::rethrow_exception(failure);
    return std::move(*out);
}

sync::sync_report run(awaitable<sync::sync_report> work) { return run_any(std::move(work)); }
sync::audit_report run(awaitable<sync::audit_report> work) { return run_any(std::move(work)); }

std::unique_ptr<store::store> open_folder(std::filesystem::path const& root, bool writable) {
    // The engine runs its file I/O on a pool in the program; the tests do the same.
    static io::blocking_pool pool(2);
    auto opened = store::local_store::open(root, writable, &pool);
    if (!opened)
        throw std::runtime_error(opened.error().message);
    return std::move(*opened);
}

sync::sync_report sync_stores(store::store& origin, store::store& mirror, sync::sync_options options) {
    return run(sync::run_sync(origin, mirror, options, nullptr));
}

sync::sync_report sync_folders(std::filesystem::path const& origin, std::filesystem::path const& mirror,
                               sync::sync_options options) {
    auto from = open_folder(origin, false);
    auto to = open_folder(mirror, true);
    return sync_stores(*from, *to, options);
}

sync::audit_report audit_folder(std::filesystem::path const& root) {
    auto repo = open_folder(root, false);
    return run(sync::run_audit(*repo, nullptr));
}

std::string describe(sync::sync_report const& report) {
    std::string out;
    if (report.fatal)
        out += "fatal: " + report.fatal->message + "\n";
    for (auto const& h : report.held)
        out += "held " + h.id + ": " + sync::kind_of(h.why.code) + ": " + h.why.message + "\n";
    for (auto const& v : report.violations)
        out += "violation " + sync::kind_of(v.code) + ": " + v.message + "\n";
    return out;
}

} // namespace mirror::test
