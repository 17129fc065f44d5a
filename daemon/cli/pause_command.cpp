#include "daemon/cli/pause_command.hpp"

#include "config/daemon_config.hpp"
#include "core/coord/pause.hpp"
#include "core/io/blocking_pool.hpp"
#include "core/io/errors.hpp"
#include "core/store/open_store.hpp"
#include "daemon/cli/check_config.hpp"
#include "daemon/cli/daemon_client.hpp"
#include "daemon/common/terminal_text.hpp"
#include "daemon/service/pass_setup.hpp"
#include "daemon/status/status_report.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/url/encode.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <unistd.h>

namespace mirror::daemon {

namespace {

constexpr int exit_io = 3;

/// "user@host", as the pause object names who paused.
std::string who() {
    char const* user = std::getenv("USER");
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0)
        host[0] = '\0';
    return std::string(user != nullptr && *user != '\0' ? user : "unknown") + "@" + (host[0] ? host : "unknown");
}

awaitable<result<void>> apply(store::store& mirror, pause_command const& cmd, coord::pause_record const& record) {
    if (cmd.resume) {
        auto removed = co_await mirror.remove(std::string(coord::pause_key));
        if (!removed && removed.error().code != io::store_errc::not_found)
            co_return removed.error();
        co_return result<void>();
    }
    co_return co_await store::write_all(mirror, std::string(coord::pause_key), coord::render_pause(record),
                                        store::write_mode::replace);
}

result<void> apply_blocking(store::store& mirror, pause_command const& cmd, coord::pause_record const& record,
                            net::io_context& io) {
    std::optional<result<void>> out;
    net::co_spawn(io, apply(mirror, cmd, record), [&](std::exception_ptr e, result<void> done) {
        if (e)
            std::rethrow_exception(e);
        out = std::move(done);
    });
    io.run();
    return std::move(*out);
}

} // namespace

int run_pause(pause_command const& cmd) {
    std::string const name = cmd.resume ? "resume" : "pause";
    auto loaded = load_for_command(cmd.config);
    if (!loaded)
        return exit_config;
    auto const& cfg = *loaded;
    auto const* repo = repository_for_command(cfg, cmd.repository, name, cmd.config);
    if (repo == nullptr)
        return 2;
    net::io_context io(1);
    io::blocking_pool pool(1);
    throttle_registry throttles;
    auto opened = store::open_store(repo->mirror, store::store_role::mirror, &pool,
                                    store_options_for(cfg, repo->mirror, throttles));
    if (!opened) {
        print_error(name + ": mirror: " + opened.error().message);
        return exit_io;
    }
    double const now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    coord::pause_record const record{now, who(), cmd.reason};
    if (auto done = apply_blocking(**opened, cmd, record, io); !done) {
        print_error(name + ": mirror: " + done.error().message);
        return exit_io;
    }
    if (cmd.resume)
        std::printf("%s: resumed: the daemons mirroring it run passes again from their next poll\n",
                    terminal_safe(cmd.repository, false).c_str());
    else
        std::printf("%s: paused by %s at %s: no daemon runs a pass of it until `fdl-mirror resume`\n",
                    terminal_safe(cmd.repository, false).c_str(), terminal_safe(record.by, false).c_str(),
                    utc_time(now).c_str());
    // A daemon on this host looks now rather than at its next poll (best effort: the pause
    // object is what counts, and every daemon reads it before each pass).
    auto looked = post_to_daemon(cfg, "/trigger?repository=" +
                                                 boost::urls::encode(cmd.repository, boost::urls::unreserved_chars));
    if (looked && looked->status == 200)
        std::printf("the daemon on this host took it into account now\n");
    else
        std::printf("no daemon on this host took it now: each daemon takes it at its next poll\n");
    return 0;
}

} // namespace mirror::daemon
