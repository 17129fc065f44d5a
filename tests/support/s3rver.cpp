#include "tests/support/s3rver.hpp"

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
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

// tests/CMakeLists.txt sets both: this build's deps folder, and the source tree's build/
// one, which scripts/setup fills when this build is another (build-sanitized/).
#ifndef FDL_MIRROR_S3RVER_DIR
#define FDL_MIRROR_S3RVER_DIR ""
#endif
#ifndef FDL_MIRROR_S3RVER_SOURCE_TREE_DIR
#define FDL_MIRROR_S3RVER_SOURCE_TREE_DIR ""
#endif

namespace mirror::test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

constexpr std::string_view listening_line = "S3rver listening on 127.0.0.1:";

fs::path cli_in(fs::path const& install_dir) {
    return install_dir / "node_modules" / "s3rver" / "bin" / "s3rver.js";
}

/// The port in s3rver's "S3rver listening on 127.0.0.1:PORT" line, 0 before it is printed.
std::uint16_t printed_port(std::string const& log) {
    auto at = log.find(listening_line);
    if (at == std::string::npos)
        return 0;
    auto end = log.find('\n', at);
    if (end == std::string::npos)
        return 0; // the line is not complete yet
    unsigned long port = std::strtoul(log.c_str() + at + listening_line.size(), nullptr, 10);
    return port > 0 && port < 65536 ? static_cast<std::uint16_t>(port) : 0;
}

/// This process's environment with NODE_OPTIONS replaced: see the class comment.
std::vector<std::string> node_environment() {
    std::vector<std::string> env;
    for (char** entry = environ; *entry != nullptr; ++entry)
        if (std::strncmp(*entry, "NODE_OPTIONS=", 13) != 0)
            env.emplace_back(*entry);
    env.emplace_back("NODE_OPTIONS=--openssl-legacy-provider");
    return env;
}

} // namespace

fs::path s3rver_install_dir() {
    for (fs::path dir : {fs::path(FDL_MIRROR_S3RVER_DIR), fs::path(FDL_MIRROR_S3RVER_SOURCE_TREE_DIR)})
        if (!dir.empty() && fs::is_regular_file(cli_in(dir)))
            return dir;
    return {};
}

s3rver_server::s3rver_server(s3rver_options options) {
    fs::path install_dir = options.install_dir.empty() ? s3rver_install_dir() : options.install_dir;
    if (install_dir.empty() || !fs::is_regular_file(cli_in(install_dir)))
        throw std::runtime_error("s3rver is not installed (looked for " +
                                 cli_in(install_dir.empty() ? fs::path(FDL_MIRROR_S3RVER_DIR) : install_dir)
                                     .string() +
                                 "): run scripts/setup");
    if (find_program("node", "/usr/bin/node").empty())
        throw std::runtime_error("node is not installed, which s3rver needs: run scripts/setup");
    fs::create_directories(data_dir());
    start(cli_in(install_dir), options.buckets);
}

s3rver_server::~s3rver_server() { stop(); }

void s3rver_server::start(fs::path const& cli, std::vector<std::string> const& buckets) {
    std::string node = find_program("node", "/usr/bin/node").string(), script = cli.string(), data = data_dir().string();
    std::vector<std::string> args{node, script, "--directory", data, "--address", "127.0.0.1", "--port", "0",
                                  "--silent"};
    for (auto const& bucket : buckets) {
        args.emplace_back("--configure-bucket");
        args.push_back(bucket);
    }
    std::vector<char*> argv;
    for (auto& arg : args)
        argv.push_back(arg.data());
    argv.push_back(nullptr);
    std::vector<std::string> env = node_environment();
    std::vector<char*> envp;
    for (auto& entry : env)
        envp.push_back(entry.data());
    envp.push_back(nullptr);

    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    std::string output = (root_ / "s3rver.log").string();
    posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&files, 1, output.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&files, 1, 2);
    // Node's signals as Node expects them (SIGTERM ends it), whatever this test process blocks.
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setsigdefault(&attributes, &all);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    int failed = ::posix_spawn(&pid_, node.c_str(), &files, &attributes, argv.data(), envp.data());
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&files);
    if (failed != 0) {
        pid_ = -1;
        throw std::runtime_error("cannot start " + node + " " + script + ": " + std::strerror(failed));
    }

    // s3rver prints its line after it has created the buckets and bound the port. Node
    // starts in about half a second; a loaded machine running sanitized tests is slower.
    auto deadline = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < deadline) {
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            throw std::runtime_error("s3rver exited at startup:\n" + log());
        }
        std::uint16_t port = printed_port(log());
        if (port != 0 && accepts_connections(port)) {
            port_ = port;
            return;
        }
        std::this_thread::sleep_for(20ms);
    }
    stop();
    throw std::runtime_error("s3rver did not accept connections within 30 s:\n" + log());
}

void s3rver_server::stop() {
    if (pid_ <= 0)
        return;
    ::kill(pid_, SIGTERM);
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

std::string s3rver_server::endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

std::string s3rver_server::log() const { return read_text(root_ / "s3rver.log"); }

} // namespace mirror::test
