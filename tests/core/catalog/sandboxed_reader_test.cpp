#include "core/catalog/sandboxed_reader.hpp"
#include "core/catalog/worker_protocol.hpp"
#include <doctest/doctest.h>

#include "core/catalog/errors.hpp"
#include "core/catalog/sandbox.hpp"
#include "tests/support/ducklake_writer.hpp"
#include "tests/support/temp_dir.hpp"

#include <seccomp.h>

#include <cerrno>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <fcntl.h>
#include <fstream>
#include <functional>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace mirror;
using namespace mirror::catalog;
using namespace mirror::test;
namespace fs = std::filesystem;

namespace {

catalog_reader::batch_item item(fs::path file, std::string name, std::chrono::milliseconds limit = std::chrono::seconds(30)) {
    read_options options;
    options.time_limit = limit;
    return {std::move(file), std::move(name), options};
}

/// A stand-in for the reader program, for what no real catalog makes DuckDB do on cue:
/// `body` runs with the socket on descriptor 3.
fs::path fake_reader(temp_dir const& tmp, std::string const& body) {
    auto path = tmp / "fake-reader.sh";
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    fs::permissions(path, fs::perms::owner_all);
    return path;
}

/// A hello frame of this protocol's version (worker_protocol_version, 2).
constexpr char const* hello = "printf 'WLDF\\002\\000\\000\\000HLDF\\000\\000\\000\\000\\000\\000\\000\\000' >&3";
static_assert(worker_protocol_version == 2, "the fake readers' hello says version 2");

error only_error(std::vector<result<catalog_contents>> const& out) {
    REQUIRE(out.size() == 1);
    REQUIRE(!out[0].has_value());
    return out[0].error();
}

} // namespace

TEST_CASE("a catalog read in the sandboxed reader gives what a read in this process gives") {
    temp_dir tmp;
    write_catalog(tmp / "a.duckdb", one_file_catalog("a.parquet"));
    write_catalog(tmp / "b.duckdb", one_file_catalog("b.parquet"));
    std::ofstream(tmp / "junk.duckdb") << "not a database";
    sandboxed_reader reader;
    auto out = reader.read_batch({item(tmp / "a.duckdb", "a"), item(tmp / "junk.duckdb", "junk"),
                                  item(tmp / "b.duckdb", "b")},
                                 tmp.path());
    REQUIRE(out.size() == 3);
    auto local = read_catalog(tmp / "a.duckdb", "a");
    REQUIRE(local.has_value());
    REQUIRE_MESSAGE(out[0].has_value(), (out[0] ? "" : out[0].error().message));
    REQUIRE(out[0]->needed.size() == 1);
    CHECK(out[0]->needed[0].path == local->needed[0].path);
    CHECK(out[0]->needed[0].bytes == 123);
    CHECK(out[0]->format == local->format);
    CHECK(out[0]->last_snapshot == local->last_snapshot);
    REQUIRE(!out[1].has_value());
    CHECK(out[1].error().code == catalog_errc::cannot_open);
    CHECK(out[1].error().message.find("junk: ") == 0);
    REQUIRE(out[2].has_value());
    CHECK(out[2]->needed[0].path == "main/towns/b.parquet");
    // A refused file costs no process: the next read is served by the same reader.
    auto started = sandboxed_reader::process_failures().started;
    CHECK(reader.read_batch({item(tmp / "b.duckdb", "b")}, tmp.path())[0].has_value());
    CHECK(sandboxed_reader::process_failures().started == started);
    // Another folder gets another process, which reads nothing outside it; and from the
    // second on, a spare is started ahead for the next folder.
    temp_dir other;
    write_catalog(other / "c.duckdb", one_file_catalog("c.parquet"));
    CHECK(reader.read_batch({item(other / "c.duckdb", "c")}, other.path())[0].has_value());
    CHECK(sandboxed_reader::process_failures().started == started + 2);
    auto outside = only_error(reader.read_batch({item(tmp / "b.duckdb", "b")}, other.path()));
    CHECK(outside.code == catalog_errc::cannot_open);
    CHECK(outside.message.find("lies outside") != std::string::npos);
}

TEST_CASE("a link is never followed to a catalog") {
    temp_dir tmp;
    write_catalog(tmp / "a.duckdb", one_file_catalog("a.parquet"));
    fs::create_symlink(tmp / "a.duckdb", tmp / "link.duckdb");
    sandboxed_reader reader;
    auto e = only_error(reader.read_batch({item(tmp / "link.duckdb", "link")}, tmp.path()));
    CHECK(e.code == catalog_errc::cannot_open);
}

TEST_CASE("a reader that dies, hangs or answers garbage fails that catalog, and the next read has a new reader") {
    temp_dir tmp;
    write_catalog(tmp / "a.duckdb", one_file_catalog("a.parquet"));
    reader_process_settings settings;
    settings.grace = std::chrono::milliseconds(200);
    settings.startup_limit = std::chrono::milliseconds(3000);
    auto before = sandboxed_reader::process_failures();
    SUBCASE("killed by a signal while reading") {
        settings.program = fake_reader(tmp, std::string(hello) + "\nhead -c 20 <&3 >/dev/null\nkill -SEGV $$");
        sandboxed_reader reader(settings);
        auto e = only_error(reader.read_batch({item(tmp / "a.duckdb", "versions/x/ducklake.duckdb")}, tmp.path()));
        CHECK(e.code == catalog_errc::reader_crashed);
        CHECK(e.message.find("versions/x/ducklake.duckdb: ") == 0);
        CHECK(e.message.find("SIGSEGV") != std::string::npos);
        CHECK(sandboxed_reader::process_failures().crashed == before.crashed + 1);
    }
    SUBCASE("an exit before its hello") {
        settings.program = fake_reader(tmp, "exit 3");
        sandboxed_reader reader(settings);
        auto e = only_error(reader.read_batch({item(tmp / "a.duckdb", "a")}, tmp.path()));
        CHECK(e.code == catalog_errc::reader_crashed);
        CHECK(e.message.find("with status 3") != std::string::npos);
    }
    SUBCASE("no answer within the time limit") {
        settings.program = fake_reader(tmp, std::string(hello) + "\nexec sleep 30");
        sandboxed_reader reader(settings);
        auto start = std::chrono::steady_clock::now();
        auto e = only_error(reader.read_batch({item(tmp / "a.duckdb", "a", std::chrono::milliseconds(300))}, tmp.path()));
        CHECK(e.code == catalog_errc::reader_limit);
        CHECK(e.message.find("took too long") != std::string::npos);
        CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
        CHECK(sandboxed_reader::process_failures().limited == before.limited + 1);
    }
    SUBCASE("garbage for an answer") {
        settings.program = fake_reader(tmp, std::string(hello) +
                                                "\nhead -c 20 <&3 >/dev/null\nprintf 'HTTP/1.1 200 OK\\r\\nServer: x\\r\\n\\r\\n' >&3\nexec sleep 30");
        sandboxed_reader reader(settings);
        auto e = only_error(reader.read_batch({item(tmp / "a.duckdb", "a")}, tmp.path()));
        CHECK(e.code == catalog_errc::reader_crashed);
        CHECK(e.message.find("garbage") != std::string::npos);
    }
    SUBCASE("a program that does not serve readers") {
        settings.program = "/bin/true";
        sandboxed_reader reader(settings);
        CHECK(only_error(reader.read_batch({item(tmp / "a.duckdb", "a")}, tmp.path())).code == catalog_errc::reader_crashed);
    }
}

namespace {

/// Runs `body` in a forked child confined by the sandbox; the child's wait status.
int in_sandbox(std::function<int()> body) {
    pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        if (!enter_catalog_sandbox({}, ::getppid()))
            ::_exit(100);
        ::_exit(body());
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    return status;
}

bool killed_by_filter(int status) { return WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS; }

} // namespace

TEST_CASE("the sandbox lets threads, memory and its own folder through, and kills a call it does not list") {
    temp_dir tmp;
    std::ofstream(tmp / "readable") << "x";
    bool private_root = describe_catalog_sandbox().starts_with("namespaces");
    // What a reader does: threads, memory, time, reading and (with a private root) its
    // copies of catalogs in its one folder.
    int status = in_sandbox([&] {
        bool ran = false;
        std::thread([&] { ran = true; }).join();
        if (!ran)
            return 1;
        std::vector<char> memory(64 << 20, 'x');
        if (memory.back() != 'x')
            return 2;
        if (private_root) {
            int fd = ::open("/catalogs/copy.duckdb", O_WRONLY | O_CREAT | O_EXCL, 0600);
            if (fd < 0 || ::write(fd, "x", 1) != 1 || ::close(fd) != 0)
                return 3;
            // The host's files are gone: the test's folder is not there.
            if (::open((tmp / "readable").c_str(), O_RDONLY) >= 0 || errno != ENOENT)
                return 4;
        } else {
            if (::open((tmp / "readable").c_str(), O_RDONLY) < 0)
                return 5;
            if (::open((tmp / "new").c_str(), O_WRONLY | O_CREAT, 0600) >= 0 || errno != EPERM)
                return 6;
        }
        return 0;
    });
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(!fs::exists(tmp / "new"));
    // Each call a reader never makes kills it, before it runs.
    CHECK(killed_by_filter(in_sandbox([] { return ::socket(AF_INET, SOCK_STREAM, 0) >= 0 ? 0 : 1; })));
    CHECK(killed_by_filter(in_sandbox([] {
        char const* argv[] = {"/bin/true", nullptr};
        ::execv("/bin/true", const_cast<char**>(argv));
        return 1;
    })));
    CHECK(killed_by_filter(in_sandbox([] { return ::fork() >= 0 ? 0 : 1; })));
    CHECK(killed_by_filter(in_sandbox([] { return ::kill(::getppid(), 0); })));
    CHECK(killed_by_filter(in_sandbox([&] { return ::unlink((tmp / "readable").c_str()); })));
    CHECK(fs::exists(tmp / "readable"));
}

TEST_CASE("the sandbox is entered under the service unit's own filter, which denies seccomp() and setrlimit") {
    pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        // As systemd's SystemCallFilter=@system-service with ~@resources, EPERM for the rest,
        // loaded as systemd loads it (raw BPF, before the program runs): libseccomp then
        // finds seccomp() refused and loads through prctl, and the limits go through prlimit64.
        ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        scmp_filter_ctx unit = seccomp_init(SCMP_ACT_ALLOW);
        seccomp_rule_add(unit, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(seccomp), 0);
        seccomp_rule_add(unit, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(setrlimit), 0);
        int bpf = ::memfd_create("unit-filter", 0);
        if (bpf < 0 || seccomp_export_bpf(unit, bpf) != 0)
            ::_exit(100);
        std::vector<sock_filter> program(static_cast<std::size_t>(::lseek(bpf, 0, SEEK_END)) / sizeof(sock_filter));
        if (::pread(bpf, program.data(), program.size() * sizeof(sock_filter), 0) < 0)
            ::_exit(100);
        sock_fprog loaded{static_cast<unsigned short>(program.size()), program.data()};
        if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &loaded) != 0)
            ::_exit(100);
        sandbox_limits limits;
        limits.address_space = std::uint64_t{8} << 30;
        limits.cpu_seconds = 100;
        if (auto entered = enter_catalog_sandbox(limits, ::getppid()); !entered) {
            std::fprintf(stderr, "%s\n", entered.error().message.c_str());
            ::_exit(101);
        }
        [[maybe_unused]] int fd = ::socket(AF_UNIX, SOCK_STREAM, 0); // the filter kills it here
        ::_exit(102);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(killed_by_filter(status));
}
