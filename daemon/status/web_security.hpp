#pragma once
// What the web configuration (config/web_config.hpp) makes of the daemon's endpoints: the
// TLS context each new connection is served with, and the basic authentication each request
// must pass. Like exporter-toolkit, it follows the files: a changed web configuration,
// certificate, key or client CA is read again at the next connection (looked at no more
// than once a second), so certificates are renewed without a restart. A change that does
// not load is logged and the last good configuration stays in force: the endpoints never
// fall back to plain HTTP or to no authentication.

#include "config/web_config.hpp"
#include "core/io/net.hpp"

#include <boost/asio/ssl/context.hpp>
#include <boost/asio/thread_pool.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <atomic>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace mirror::daemon {

/// One loaded web configuration: the file's settings and the TLS context they build.
struct web_settings {
    config::web_config config;
    std::shared_ptr<net::ssl::context> tls; ///< null: plain HTTP
};

/// Loads `file` and everything it names (certificate, key, client CA), as the daemon
/// would serve it; the problems, one per line ("cert_file /etc/…: no certificate in it"),
/// when it would not load. check-config and a reload run this too.
std::variant<std::shared_ptr<web_settings const>, std::vector<std::string>> load_web_settings(
    std::filesystem::path const& file);

/// Whether the peer certificate of a finished handshake carries one of `allowed` as a
/// subject alternative name (DNS, e-mail, IP address or URI), as exporter-toolkit's
/// client_allowed_sans requires. True when `allowed` is empty.
bool peer_has_allowed_san(SSL const* connection, std::vector<std::string> const& allowed);

/// The answer to a request's Authorization header against basic_auth_users.
/// busy: too many comparisons wait already; the request is answered 503, never queued.
enum class auth_result { allowed, refused, busy };

class web_security {
public:
    using log_function = std::function<void(bool error, std::string const& message)>;

    /// `file` nullopt: plain HTTP without authentication, until use() names a file.
    /// `settings` is the file's loaded form (load_web_settings), given so that a startup
    /// with a broken file is refused before this exists.
    web_security(std::optional<std::filesystem::path> file, std::shared_ptr<web_settings const> settings,
                 log_function log);
    ~web_security();

    /// The settings for a new connection: the files are looked at again when the last look
    /// is a second old, and reloaded when one changed.
    std::shared_ptr<web_settings const> current();

    /// Takes another file after a reload of the daemon's configuration (already loaded).
    void use(std::optional<std::filesystem::path> file, std::shared_ptr<web_settings const> settings);

    /// Checks a request's Authorization header (empty when absent) against `settings`'s
    /// users. The bcrypt comparison runs on a thread of its own, never on the caller's, at
    /// most max_pending_comparisons waiting at once (more: busy). Successful logins are
    /// remembered by a digest of user, hash and password, so a scraper's repeated requests
    /// cost one comparison; refusals never are, so wrong passwords cannot push a scraper's
    /// login out. An unknown user is compared with the costliest configured hash, so that
    /// timing does not tell which users exist.
    awaitable<auth_result> authorize(web_settings const& settings, std::string_view authorization);

    /// Comparisons that may wait for the hashing thread at once.
    static constexpr std::size_t max_pending_comparisons = 4;

private:
    struct file_stamp {
        std::filesystem::path path;
        std::filesystem::file_time_type modified;
        std::uintmax_t size = 0;
        bool operator==(file_stamp const&) const = default;
    };
    std::vector<file_stamp> stamps() const;

    std::optional<std::filesystem::path> file_;
    std::shared_ptr<web_settings const> settings_;
    std::vector<file_stamp> stamps_;
    std::vector<file_stamp> refused_stamps_; ///< the files as they were when a reload failed: logged once
    std::chrono::steady_clock::time_point looked_;
    log_function log_;
    std::set<std::string> remembered_; ///< digests of successful logins
    std::atomic<std::size_t> pending_{0}; ///< comparisons asked for and not answered
    net::thread_pool hashing_{1};
};

} // namespace mirror::daemon
