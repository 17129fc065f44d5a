#include "core/catalog/sandbox.hpp"

#include "core/catalog/detail/reader_isolation.hpp"
#include "core/catalog/detail/syscall_allow_list.hpp"
#include "core/catalog/errors.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace mirror::catalog {

namespace {

error cannot(std::string const& what) {
    return make_error(catalog_errc::reader_crashed, "catalog reader: cannot " + what);
}

error cannot(std::string const& what, int err) { return cannot(what + " (" + std::strerror(err) + ")"); }

result<void> set_limit(int resource, std::uint64_t value, char const* name) {
    if (value == 0)
        return {};
    rlimit limit{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
    if (::setrlimit(resource, &limit) != 0)
        return cannot(std::string("set ") + name, errno);
    return {};
}

/// The descriptors a reader may hold: the socket, a request's catalogs (at most 64 in a
/// message, worker_socket.cpp), their copies, and DuckDB's own few.
constexpr std::uint64_t reader_descriptors = 256;

} // namespace

result<sandbox_state> enter_catalog_sandbox(sandbox_limits const& limits, int parent) {
    sandbox_state state;
    // Credentials change first: each change clears the death signal, set after them.
    auto isolated = detail::isolate_reader(limits.scratch_bytes);
    if (!isolated.failed.empty())
        return cannot(isolated.failed);
    state.private_root = isolated.private_root;
    state.why_not = std::move(isolated.why_not);
    if (auto e = detail::drop_capabilities(); !e.empty())
        return cannot(e);
    // Not dumpable: its /proc belongs to root, and no process of its user may trace it.
    if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
        return cannot("stop being dumpable", errno);
    // It dies with its parent, even one killed with SIGKILL; the filter below keeps it
    // from changing that.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
        return cannot("ask to die with its parent", errno);
    if (::getppid() != parent)
        return cannot("start: its parent is gone");
    if (auto ok = set_limit(RLIMIT_AS, limits.address_space, "its address space"); !ok)
        return ok.error();
    if (auto ok = set_limit(RLIMIT_CPU, limits.cpu_seconds, "its CPU time"); !ok)
        return ok.error();
    if (auto ok = set_limit(RLIMIT_NOFILE, reader_descriptors, "its descriptors"); !ok)
        return ok.error();
    // A core of a process that read hostile bytes helps no one, and costs disk.
    rlimit no_core{0, 0};
    if (::setrlimit(RLIMIT_CORE, &no_core) != 0)
        return cannot("turn core dumps off", errno);
    if (state.private_root) {
        // Its root holds nothing else, but Landlock still keeps it to its one folder, and
        // (ABI 6) keeps its signals and abstract sockets inside its domain. A kernel or a
        // service filter without Landlock leaves the namespaces and the filter.
        if (detail::landlock_confine(detail::private_catalogs, true).empty())
            state.landlock_abi = detail::landlock_abi();
    }
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return cannot("set no_new_privs", errno);
    auto access = state.private_root ? detail::file_access::private_root : detail::file_access::read_only;
    if (int rc = detail::load_syscall_allow_list(access); rc != 0)
        return cannot("load its seccomp filter", -rc);
    return state;
}

result<void> confine_reads_to(std::string const& folder, sandbox_state& state) {
    auto e = detail::landlock_confine(folder, false);
    if (e.empty()) {
        state.landlock_abi = detail::landlock_abi();
        return {};
    }
    if (e == "unsupported")
        return {}; // the filter still refuses every write; reads are the user's own
    return cannot(e);
}

std::string describe_catalog_sandbox() {
    // The child tries what a reader does (leaving root, then the namespaces and the
    // private root) and says by its exit status whether it got them. glibc makes malloc
    // usable in a forked child, which std::string needs.
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
        return "unknown (cannot make a pipe)";
    pid_t child = ::fork();
    if (child == 0) {
        ::close(pipe_fds[0]);
        auto isolated = detail::isolate_reader(64 << 10);
        bool ok = isolated.private_root;
        std::string said = !isolated.failed.empty() ? isolated.failed : isolated.why_not;
        [[maybe_unused]] auto n = ::write(pipe_fds[1], said.data(), said.size());
        ::_exit(ok ? 0 : 1);
    }
    ::close(pipe_fds[1]);
    std::string why;
    char buffer[256];
    for (ssize_t n; child > 0 && (n = ::read(pipe_fds[0], buffer, sizeof buffer)) != 0;) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || why.size() > 1024)
            break;
        why.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(pipe_fds[0]);
    int status = 0;
    while (child > 0 && ::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    int abi = detail::landlock_abi();
    std::string rest = (abi > 0 ? "Landlock ABI " + std::to_string(abi) : std::string("no Landlock")) +
                       ", no capabilities, seccomp allow-list";
    if (child > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return "namespaces with an empty root, " + rest;
    return "no namespaces (" + (why.empty() ? std::string("unknown reason") : why) + "): " + rest;
}

} // namespace mirror::catalog
