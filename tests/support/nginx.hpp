#pragma once
// A real nginx for the HTTP(S) origin tests, serving a folder on 127.0.0.1 from a private
// prefix folder (its own nginx.conf, pid file, logs and temp paths), as the current user.

#include "tests/support/temp_dir.hpp"

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>

namespace mirror::test {

struct nginx_options {
    std::filesystem::path root; ///< the folder served at "/"
    /// HTTPS with this certificate and key when both are set, else plain HTTP.
    std::filesystem::path tls_cert, tls_key;
    /// nginx directives added to the server block, after "location / {}": for example
    /// "location = /moved { return 301 /file.txt; }" or "location /busy { return 503; }".
    std::string extra_config;
};

/// Whether an nginx binary is on PATH or at /usr/sbin/nginx. Tests do not skip without
/// it (scripts/setup installs it): nginx_server's constructor fails instead.
bool nginx_available();

/// An nginx process serving `options.root` on a free port of 127.0.0.1, with nginx's
/// defaults where the tests rely on them: ETag on, autoindex off, keep-alive. One process
/// (master_process off, daemon off), so it never drops privileges: as root it reads a
/// root-only temp folder too. The constructor returns once the port accepts connections,
/// and throws std::runtime_error with nginx's error log when nginx is missing or does not
/// start. The destructor stops it (SIGTERM, then SIGKILL after 5 s) and waits for it.
/// Not thread-safe; use from the test's thread.
class nginx_server {
public:
    explicit nginx_server(nginx_options options);
    ~nginx_server();
    nginx_server(nginx_server const&) = delete;
    nginx_server& operator=(nginx_server const&) = delete;

    std::uint16_t port() const { return port_; }
    /// "http://127.0.0.1:PORT/", or "https://localhost:PORT/" (the certificate's name).
    std::string url() const;
    /// The access log so far, one line a request: "CONNECTION REQUESTS_ON_IT STATUS
    /// BYTES_SENT "REQUEST_LINE"" (nginx's $connection and $connection_requests, to check
    /// keep-alive reuse; connection 1 is the constructor's readiness probe). nginx writes
    /// it after each response.
    std::string access_log() const;
    /// The error log so far, for a failing test's INFO.
    std::string error_log() const;

private:
    bool start_on(std::uint16_t port);
    void stop();

    nginx_options options_;
    temp_dir prefix_;
    std::uint16_t port_ = 0;
    pid_t pid_ = -1;
};

} // namespace mirror::test
