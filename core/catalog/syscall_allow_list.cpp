#include "core/catalog/detail/syscall_allow_list.hpp"

#include <seccomp.h>

#include <cerrno>
#include <cstdint>
#include <fcntl.h>
#include <initializer_list>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <vector>

namespace mirror::catalog::detail {

namespace {

/// A libseccomp context whose default is to kill the process; owns it.
class allow_list {
public:
    allow_list() : ctx_(seccomp_init(SCMP_ACT_KILL_PROCESS)) {}
    ~allow_list() {
        if (ctx_ != nullptr)
            seccomp_release(ctx_);
    }
    allow_list(allow_list const&) = delete;
    allow_list& operator=(allow_list const&) = delete;

    bool made() const { return ctx_ != nullptr; }

    /// Allows `calls` whatever their arguments. A call this kernel's headers do not know
    /// is skipped (it cannot be made either).
    void allow(std::initializer_list<char const*> calls) {
        for (char const* name : calls)
            add(name, SCMP_ACT_ALLOW, {});
    }
    /// Allows `call` when its argument `arg` has none of `bits` set.
    void allow_without_bits(char const* call, unsigned arg, std::uint64_t bits) {
        add(call, SCMP_ACT_ALLOW, {SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, bits, 0)});
    }
    /// Allows `call` when its argument `arg` has every bit of `bits` set.
    void allow_with_bits(char const* call, unsigned arg, std::uint64_t bits) {
        add(call, SCMP_ACT_ALLOW, {SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, bits, bits)});
    }
    /// Allows `call` when its argument `arg` is `value`.
    void allow_if(char const* call, unsigned arg, std::uint64_t value) {
        add(call, SCMP_ACT_ALLOW, {SCMP_CMP(arg, SCMP_CMP_EQ, value)});
    }
    /// Answers `calls` with `err` instead of running them: calls a library makes and
    /// copes with failing, listed here so that they do not kill the reader.
    void refuse(std::initializer_list<char const*> calls, int err) {
        for (char const* name : calls)
            add(name, SCMP_ACT_ERRNO(static_cast<std::uint32_t>(err)), {});
    }

    int load() {
        if (failed_ != 0)
            return failed_;
        if (seccomp_load(ctx_) == 0)
            return 0;
        return load_through_prctl();
    }

private:
    void add(char const* call, std::uint32_t action, std::vector<scmp_arg_cmp> const& conditions) {
        int nr = seccomp_syscall_resolve_name(call);
        if (nr == __NR_SCMP_ERROR)
            return;
        int rc = seccomp_rule_add_array(ctx_, action, nr, static_cast<unsigned>(conditions.size()),
                                        conditions.empty() ? nullptr : conditions.data());
        if (rc != 0 && failed_ == 0)
            failed_ = rc;
    }

    /// systemd's @system-service does not list seccomp() but allows prctl: the same
    /// program, exported and loaded that way.
    int load_through_prctl() {
        int bpf = ::memfd_create("fdl-mirror-catalog-filter", MFD_CLOEXEC);
        if (bpf < 0)
            return -errno;
        int rc = seccomp_export_bpf(ctx_, bpf);
        std::vector<sock_filter> program;
        if (rc == 0) {
            program.resize(static_cast<std::size_t>(::lseek(bpf, 0, SEEK_END)) / sizeof(sock_filter));
            if (::pread(bpf, program.data(), program.size() * sizeof(sock_filter), 0) < 0)
                rc = -errno;
        }
        ::close(bpf);
        if (rc != 0 || program.empty() || program.size() > 0xffff)
            return rc != 0 ? rc : -EINVAL;
        sock_fprog loaded{static_cast<unsigned short>(program.size()), program.data()};
        return ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &loaded) == 0 ? 0 : -errno;
    }

    scmp_filter_ctx ctx_;
    int failed_ = 0;
};

void add_rules(allow_list& a, file_access access) {
    // Memory. Nothing new becomes executable: the program and its libraries are mapped
    // before the filter, and a reader never loads code (no JIT, no extensions), so code
    // injected as data can never be made to run as code.
    a.allow({"brk", "munmap", "mremap", "madvise"});
    a.allow_without_bits("mmap", 2, PROT_EXEC);
    a.allow_without_bits("mprotect", 2, PROT_EXEC);
    // Threads (DuckDB's, the query watchdog's), never processes: clone must share the
    // thread group. glibc tries clone3 first, whose flags seccomp cannot see; ENOSYS makes
    // it fall back to clone.
    a.allow_with_bits("clone", 0, CLONE_THREAD | CLONE_VM);
    a.refuse({"clone3"}, ENOSYS);
    a.allow({"futex", "set_robust_list", "rseq", "set_tid_address", "sched_yield", "sched_getaffinity", "gettid",
             "getpid", "exit", "exit_group", "restart_syscall"});
    // Signals to itself only: its own handlers, masks and stacks, and abort(), which
    // raises SIGABRT with tgkill on its own pid. Nothing else can be signalled: no kill,
    // tkill, rt_sigqueueinfo, rt_tgsigqueueinfo or pidfd_send_signal.
    a.allow({"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigaltstack"});
    a.allow_if("tgkill", 0, static_cast<std::uint64_t>(::getpid()));
    // Time, for deadlines and DuckDB's timers.
    a.allow({"clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday"});
    // Its descriptors: the answer socket (3), the catalogs the parent passed, the files it
    // opens. What it can open is what the mount namespace or Landlock leaves reachable.
    a.allow({"read", "pread64", "readv", "preadv", "write", "writev", "close", "fstat", "stat", "lstat", "newfstatat", "statx",
             "lseek", "fcntl", "getdents64", "readlink", "readlinkat", "access", "faccessat", "faccessat2", "getcwd",
             "fadvise64", "recvmsg", "sendmsg", "poll", "ppoll"});
    if (access == file_access::private_root) {
        // Its own tmpfs: the catalogs are copied in (sendfile, over the last request's
        // copies, cut to size), then read.
        a.allow({"openat", "sendfile", "ftruncate"});
    } else {
        // O_TMPFILE needs O_WRONLY or O_RDWR (and holds O_DIRECTORY's bit, which a
        // read-only open of a folder uses): the write bits refuse it.
        constexpr std::uint64_t writing = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND;
        a.allow_without_bits("openat", 2, writing);
        a.refuse({"openat2"}, ENOSYS); // flags in a struct; glibc uses openat
    }
    // DuckDB makes its temporary folder before it spills; spilling is not for a reader
    // (its memory limit is a limit): the folder is refused, and DuckDB reports memory.
    a.refuse({"mkdir", "mkdirat"}, EPERM);
    // isatty() and friends: no terminal here.
    a.refuse({"ioctl"}, ENOTTY);
    // Facts about the machine and itself that DuckDB and glibc read.
    a.allow({"getrandom", "uname", "sysinfo", "getrusage", "getuid", "geteuid", "getgid", "getegid"});
    a.allow_if("prlimit64", 2, 0); // reading a limit; setting one is refused
    // Naming its threads; no other prctl (not the death signal, not dumpability).
    a.allow_if("prctl", 0, PR_SET_NAME);
    a.allow_if("prctl", 0, PR_GET_NAME);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__) || defined(__SANITIZE_THREAD__)
    // Sanitized builds only: the sanitizers' runtime checks whether memory is readable by
    // writing it into a pipe of its own (UBSan's vptr check), which reaches nothing.
    a.allow({"pipe2"});
#endif
    // Landlock only ever narrows: a reader without namespaces confines its reads to its
    // pass's folder when it learns it, after this filter is in place.
    a.allow({"landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self"});
}

} // namespace

int load_syscall_allow_list(file_access access) {
    allow_list a;
    if (!a.made())
        return -ENOMEM;
    add_rules(a, access);
    return a.load();
}

} // namespace mirror::catalog::detail
