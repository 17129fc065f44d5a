#include "tests/support/nginx.hpp"

#include "tests/support/local_servers.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

extern char** environ;

namespace mirror::test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

sockaddr_in loopback(std::uint16_t port) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return address;
}

/// A port of 127.0.0.1 that was free a moment ago: the kernel's pick for port 0. Another
/// process may take it before nginx binds it; the caller retries then.
std::uint16_t free_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        throw std::runtime_error("cannot create a socket to find a free port");
    sockaddr_in address = loopback(0);
    socklen_t size = sizeof address;
    bool found = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                 ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0;
    ::close(fd);
    if (!found)
        throw std::runtime_error("cannot bind 127.0.0.1:0 to find a free port");
    return ntohs(address.sin_port);
}

std::string config_for(nginx_options const& o, fs::path const& prefix, std::uint16_t port) {
    bool tls = !o.tls_cert.empty() && !o.tls_key.empty();
    std::string p = prefix.string() + "/";
    std::string conf;
    // As root, nginx would chown its temp folders to "nobody" (which need not exist);
    // as anyone else the "user" directive only draws a warning.
    if (::geteuid() == 0)
        conf += "user root;\n";
    conf += "daemon off;\n"
            "master_process off;\n"
            "pid " + p + "nginx.pid;\n"
            "error_log " + p + "error.log info;\n"
            "events { worker_connections 64; }\n"
            "http {\n"
            "    log_format conn '$connection $connection_requests $status $body_bytes_sent \"$request\"';\n"
            "    access_log " + p + "access.log conn;\n"
            "    client_body_temp_path " + p + "tmp/body;\n"
            "    proxy_temp_path " + p + "tmp/proxy;\n"
            "    fastcgi_temp_path " + p + "tmp/fastcgi;\n"
            "    uwsgi_temp_path " + p + "tmp/uwsgi;\n"
            "    scgi_temp_path " + p + "tmp/scgi;\n"
            "    default_type application/octet-stream;\n"
            "    types { application/json json; text/plain txt; }\n"
            "    sendfile on;\n"
            "    keepalive_timeout 60s;\n"
            "    server {\n"
            "        listen 127.0.0.1:" + std::to_string(port) + (tls ? " ssl" : "") + ";\n"
            "        server_name localhost;\n";
    if (tls)
        conf += "        ssl_certificate " + o.tls_cert.string() + ";\n"
                "        ssl_certificate_key " + o.tls_key.string() + ";\n";
    conf += "        root " + o.root.string() + ";\n"
            "        autoindex off;\n"
            "        etag on;\n"
            "        location / { }\n" +
            o.extra_config + "\n"
            "    }\n"
            "}\n";
    return conf;
}

} // namespace

bool nginx_available() { return !find_program("nginx", "/usr/sbin/nginx").empty(); }

nginx_server::nginx_server(nginx_options options) : options_(std::move(options)) {
    if (!nginx_available())
        throw std::runtime_error("nginx is not installed: run scripts/setup");
    fs::create_directories(prefix_ / "tmp");
    // A port taken between free_port() and nginx's bind makes nginx exit: pick another.
    for (int attempt = 0; attempt < 5; ++attempt)
        if (start_on(free_port()))
            return;
    throw std::runtime_error("nginx found no free port in 5 attempts:\n" + error_log());
}

nginx_server::~nginx_server() { stop(); }

bool nginx_server::start_on(std::uint16_t port) {
    fs::path conf = prefix_ / "nginx.conf";
    {
        std::ofstream out(conf, std::ios::trunc);
        out << config_for(options_, prefix_.path(), port);
    }
    fs::remove(prefix_ / "nginx.pid");
    std::string binary = find_program("nginx", "/usr/sbin/nginx").string(), prefix = prefix_.path().string() + "/", conf_path = conf.string(),
                early_log = (prefix_ / "error.log").string();
    // -e: the log for errors before nginx.conf is read (nginx >= 1.19.5).
    std::vector<char*> argv{binary.data(), const_cast<char*>("-p"), prefix.data(), const_cast<char*>("-c"),
                            conf_path.data(), const_cast<char*>("-e"), early_log.data(), nullptr};
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    std::string output = (prefix_ / "nginx.out").string();
    posix_spawn_file_actions_addopen(&files, 1, output.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&files, 1, 2);
    // nginx's signals as nginx expects them, whatever this test process blocks or ignores.
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setsigdefault(&attributes, &all);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    int failed = ::posix_spawn(&pid_, binary.c_str(), &files, &attributes, argv.data(), environ);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&files);
    if (failed != 0) {
        pid_ = -1;
        throw std::runtime_error("cannot start " + binary);
    }

    // Ready once the pid file exists (written after the listening socket is opened) and
    // the port accepts a connection.
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < deadline) {
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            std::string log = error_log();
            if (log.find("Address already in use") != std::string::npos)
                return false;
            throw std::runtime_error("nginx exited at startup:\n" + log + read_text(prefix_ / "nginx.out"));
        }
        if (fs::exists(prefix_ / "nginx.pid") && accepts_connections(port)) {
            port_ = port;
            return true;
        }
        std::this_thread::sleep_for(10ms);
    }
    stop();
    throw std::runtime_error("nginx did not accept connections within 10 s:\n" + error_log());
}

void nginx_server::stop() {
    if (pid_ <= 0)
        return;
    ::kill(pid_, SIGTERM); // fast shutdown: open connections are closed
    auto deadline = std::chrono::steady_clock::now() + 5s;
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, &status, 0);
            break;
        }
        std::this_thread::sleep_for(5ms);
    }
    pid_ = -1;
}

std::string nginx_server::url() const {
    bool tls = !options_.tls_cert.empty() && !options_.tls_key.empty();
    return std::string(tls ? "https://localhost:" : "http://127.0.0.1:") + std::to_string(port_) + "/";
}

std::string nginx_server::access_log() const { return read_text(prefix_ / "access.log"); }

std::string nginx_server::error_log() const { return read_text(prefix_ / "error.log"); }

} // namespace mirror::test
