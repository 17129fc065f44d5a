#include "core/catalog/sandbox.hpp"
#include <doctest/doctest.h>

#include "core/catalog/errors.hpp"
#include "core/catalog/sandboxed_reader.hpp"
#include "tests/support/ducklake_writer.hpp"
#include "tests/support/temp_dir.hpp"

#include <seccomp.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <functional>
#include <sstream>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

// The sandbox's regression suite (issue 45): a stand-in for an exploit of DuckDB
// (tests/support/reader_exploit.cpp) is preloaded into a real reader under the shipped
// sandbox, and makes one attack each time, as code running in the reader would. Each must
// fail: the reader is killed by its filter (SIGSYS) or every call it makes fails (exit 67),
// the version is held, and the process that started the reader is unharmed.

using namespace mirror;
using namespace mirror::catalog;
using namespace mirror::test;
namespace fs = std::filesystem;

namespace {

/// How an attack ended, seen from the process that started the reader.
struct attack_outcome {
    bool parent_survived = false; ///< it finished its read and exited 0
    std::string error;            ///< the catalog's error ("read" when it was read)
    std::string parent_stderr;    ///< what reached that process's standard error
};

/// Like systemd's RestrictNamespaces=yes: a filter, inherited by the reader, that refuses
/// every namespace, so that the reader falls back to Landlock and a read-only filter.
void refuse_namespaces() {
    ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    scmp_filter_ctx f = seccomp_init(SCMP_ACT_ALLOW);
    seccomp_rule_add(f, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 0);
    seccomp_rule_add(f, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(setns), 0);
    if (seccomp_load(f) != 0)
        ::_exit(100);
    seccomp_release(f);
}

/// Reads one catalog with the stand-in preloaded into the reader, making `attack` at
/// `target`, from a forked process (the parent the attack aims at).
attack_outcome run_attack(std::string const& attack, std::string const& target, bool namespaces,
                          std::function<void(pid_t)> while_reading = {}) {
    temp_dir tmp;
    write_catalog(tmp / "a.duckdb", one_file_catalog("a.parquet"));
    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);
    std::string stderr_path = (tmp / "parent-stderr").string();
    pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        ::close(pipe_fds[0]);
        int err = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        ::dup2(err, 2);
        if (!namespaces)
            refuse_namespaces();
        reader_process_settings settings;
        settings.environment = {"LD_PRELOAD=" FDL_MIRROR_READER_EXPLOIT, "FDL_READER_EXPLOIT=" + attack,
                                "FDL_READER_EXPLOIT_TARGET=" + target,
                                "FDL_READER_EXPLOIT_PARENT=" + std::to_string(::getpid()),
                                // a sanitizer's runtime wants to be loaded first; here it is not
                                "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0"};
        settings.grace = std::chrono::milliseconds(500);
        sandboxed_reader reader(settings);
        read_options options;
        options.time_limit = std::chrono::seconds(20);
        auto out = reader.read_batch({{tmp / "a.duckdb", "versions/x/ducklake.duckdb", options}}, tmp.path());
        std::string said = out.front() ? "read" : out.front().error().message;
        [[maybe_unused]] auto n = ::write(pipe_fds[1], said.data(), said.size());
        ::_exit(0);
    }
    ::close(pipe_fds[1]);
    if (while_reading)
        while_reading(child);
    attack_outcome outcome;
    char buffer[512];
    for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;)
        outcome.error.append(buffer, static_cast<std::size_t>(n));
    ::close(pipe_fds[0]);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    outcome.parent_survived = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    std::ifstream in(stderr_path);
    std::stringstream text;
    text << in.rdbuf();
    outcome.parent_stderr = text.str();
    return outcome;
}

/// The attack failed: the filter killed the reader, or every call failed; the version is
/// held and its parent lived on.
void check_refused(attack_outcome const& o, std::string const& attack) {
    INFO("attack: ", attack, "; the reader's parent was told: ", o.error);
    CHECK(o.parent_survived);
    CHECK(o.error.find("versions/x/ducklake.duckdb: ") == 0);
    bool killed = o.error.find("(SIGSYS)") != std::string::npos;
    bool failed = o.error.find("with status 67") != std::string::npos;
    CHECK((killed || failed));
    CHECK(o.error.find("status 66") == std::string::npos);
}

/// The control: the stand-in is loaded and runs its attack after the sandbox is entered
/// (an attack that cannot fail says so), so that a refusal seen is the sandbox's.
void check_stand_in_runs(bool namespaces) {
    auto o = run_attack("noop", "", namespaces);
    INFO("the control's parent was told: ", o.error);
    CHECK(o.parent_survived);
    CHECK(o.error.find("with status 66") != std::string::npos);
}

bool has_namespaces() { return describe_catalog_sandbox().starts_with("namespaces"); }

/// The processes whose parent is `parent` and whose argv[0] is the reader's name.
std::vector<pid_t> readers_of(pid_t parent) {
    std::vector<pid_t> out;
    for (auto const& entry : fs::directory_iterator("/proc")) {
        std::string name = entry.path().filename();
        if (name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        std::ifstream stat(entry.path() / "stat");
        std::string line;
        std::getline(stat, line);
        auto close = line.rfind(')');
        if (close == std::string::npos)
            continue;
        std::istringstream rest(line.substr(close + 2));
        char state = 0;
        pid_t ppid = 0;
        rest >> state >> ppid;
        std::ifstream cmdline(entry.path() / "cmdline");
        std::string argv0;
        std::getline(cmdline, argv0, '\0');
        if (ppid == parent && argv0 == "fdl-mirror-catalog-reader" && state != 'Z')
            out.push_back(std::stoi(name));
    }
    return out;
}

bool gone(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line))
        return true;
    auto close = line.rfind(')');
    return close != std::string::npos && line.size() > close + 2 && line[close + 2] == 'Z';
}

} // namespace

TEST_CASE("an exploited reader can neither signal, trace nor outlive its parent") {
    for (bool namespaces : {true, false}) {
        CAPTURE(namespaces);
        check_stand_in_runs(namespaces);
        for (char const* attack : {"rt_sigqueueinfo", "rt_tgsigqueueinfo", "kill", "tgkill-parent",
                                   "pidfd_send_signal", "ptrace", "clear-death-signal", "dumpable", "fork", "exec"})
            check_refused(run_attack(attack, "", namespaces), attack);
    }
}

TEST_CASE("an exploited reader reads nothing outside its catalog: not its parent's memory, not the user's files") {
    temp_dir secrets;
    auto secret = secrets / "credentials";
    std::ofstream(secret) << "aws_secret_access_key = 7nB1CWQq6G0ZW/secret\n";
    fs::permissions(secret, fs::perms::owner_read | fs::perms::owner_write);
    for (bool namespaces : {true, false}) {
        CAPTURE(namespaces);
        check_stand_in_runs(namespaces);
        check_refused(run_attack("parent-environ", "", namespaces), "parent-environ");
        check_refused(run_attack("parent-mem", "", namespaces), "parent-mem");
        check_refused(run_attack("read-file", secret.string(), namespaces), "read-file");
        if (fs::exists("/etc/shadow"))
            check_refused(run_attack("read-file", "/etc/shadow", namespaces), "read /etc/shadow");
        check_refused(run_attack("write-file", (secrets / "owned").string(), namespaces), "write-file");
        CHECK(!fs::exists(secrets / "owned"));
    }
}

TEST_CASE("an exploited reader gets no network, no capability, no IPC and no executable memory") {
    for (bool namespaces : {true, false}) {
        CAPTURE(namespaces);
        check_stand_in_runs(namespaces);
        for (char const* attack : {"network", "unix-socket", "capabilities", "setuid-root", "sysv-shm", "posix-mq",
                                   "executable-memory"})
            check_refused(run_attack(attack, "", namespaces), attack);
    }
}

TEST_CASE("an exploited reader cannot take a folder mirror's lock") {
    temp_dir mirror_dir;
    fs::create_directories(mirror_dir / ".fdl-mirror");
    auto lock = mirror_dir / ".fdl-mirror" / "lock";
    std::ofstream(lock) << "";
    for (bool namespaces : {true, false}) {
        CAPTURE(namespaces);
        check_refused(run_attack("lock", lock.string(), namespaces), "lock");
        int fd = ::open(lock.c_str(), O_RDONLY);
        REQUIRE(fd >= 0);
        CHECK(::flock(fd, LOCK_EX | LOCK_NB) == 0);
        ::close(fd);
    }
}

TEST_CASE("what an exploited reader writes to its standard error reaches no log") {
    for (bool namespaces : {true, false}) {
        CAPTURE(namespaces);
        auto o = run_attack("forge-log", "", namespaces);
        check_refused(o, "forge-log");
        CHECK(o.parent_stderr.find("forged") == std::string::npos);
    }
}

TEST_CASE("a reader dies with its parent, even one that is killed while the reader lingers") {
    for (bool namespaces : {true, false}) {
        CAPTURE(namespaces);
        std::vector<pid_t> readers;
        run_attack("linger", "", namespaces, [&](pid_t parent) {
            // The reader is started, sandboxed and attacking: then its parent dies.
            for (int i = 0; i < 200 && readers.empty(); ++i) {
                std::this_thread::sleep_for(std::chrono::milliseconds(25));
                readers = readers_of(parent);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            ::kill(parent, SIGKILL);
        });
        REQUIRE(readers.size() == 1);
        bool died = false;
        for (int i = 0; i < 200 && !died; ++i) {
            died = gone(readers.front());
            if (!died)
                std::this_thread::sleep_for(std::chrono::milliseconds(25));
        }
        CHECK(died);
    }
}

TEST_CASE("a reader's root is empty but for its catalogs, where the kernel allows namespaces") {
    std::string description = describe_catalog_sandbox();
    INFO("this machine: ", description);
    CHECK(description.find("seccomp allow-list") != std::string::npos);
    // The stand-in lists its root: anything but its catalogs' folder is an escape.
    auto o = run_attack("look-around", "", true);
    if (has_namespaces()) {
        check_refused(o, "look-around");
    } else {
        MESSAGE("no namespaces here: ", description);
        CHECK(o.error.find("status 66") != std::string::npos);
    }
}
