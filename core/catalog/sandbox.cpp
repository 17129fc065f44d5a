#include "core/catalog/sandbox.hpp"

#include "core/catalog/errors.hpp"

#include <seccomp.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <initializer_list>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <vector>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

namespace mirror::catalog {

namespace {

error cannot(std::string const& what, int err) {
    return make_error(catalog_errc::reader_crashed,
                      "catalog reader: cannot " + what + " (" + std::string(std::strerror(err)) + ")");
}

result<void> set_limit(int resource, std::uint64_t value, char const* name) {
    if (value == 0)
        return {};
    rlimit limit{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
    if (::setrlimit(resource, &limit) != 0)
        return cannot(std::string("set ") + name, errno);
    return {};
}

/// The filter itself; owns the libseccomp context.
class filter {
public:
    filter() : ctx_(seccomp_init(SCMP_ACT_ALLOW)) {}
    ~filter() {
        if (ctx_ != nullptr)
            seccomp_release(ctx_);
    }
    filter(filter const&) = delete;
    filter& operator=(filter const&) = delete;

    bool made() const { return ctx_ != nullptr; }

    /// Denies `calls` outright. A call this kernel's headers do not know is skipped.
    void deny(std::initializer_list<char const*> calls, int err = EPERM) {
        for (char const* name : calls) {
            int nr = seccomp_syscall_resolve_name(name);
            if (nr != __NR_SCMP_ERROR)
                add(seccomp_rule_add(ctx_, SCMP_ACT_ERRNO(err), nr, 0));
        }
    }

    /// Denies `call` when its argument `arg` has any bit of `bits` set.
    void deny_with_bits(char const* call, unsigned arg, std::uint64_t bits) {
        int nr = seccomp_syscall_resolve_name(call);
        if (nr == __NR_SCMP_ERROR)
            return;
        for (std::uint64_t bit = 1; bit != 0 && bit <= bits; bit <<= 1)
            if ((bits & bit) != 0)
                add(seccomp_rule_add(ctx_, SCMP_ACT_ERRNO(EPERM), nr, 1, SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, bit, bit)));
    }

    /// Denies `call` when its argument `arg` is not `value`.
    void deny_unless(char const* call, unsigned arg, std::uint64_t value) {
        int nr = seccomp_syscall_resolve_name(call);
        if (nr != __NR_SCMP_ERROR)
            add(seccomp_rule_add(ctx_, SCMP_ACT_ERRNO(EPERM), nr, 1, SCMP_CMP(arg, SCMP_CMP_NE, value)));
    }

    /// Denies `call` when its argument `arg` has none of `bits` set.
    void deny_without_bits(char const* call, unsigned arg, std::uint64_t bits) {
        int nr = seccomp_syscall_resolve_name(call);
        if (nr != __NR_SCMP_ERROR)
            add(seccomp_rule_add(ctx_, SCMP_ACT_ERRNO(EPERM), nr, 1, SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, bits, 0)));
    }

    /// Loads the filter; 0 or a negative errno.
    int load() {
        if (failed_ != 0)
            return failed_;
        if (seccomp_load(ctx_) == 0)
            return 0;
        // A service's own filter may refuse seccomp() itself (systemd's @system-service
        // does not list it) while it allows prctl: load the same program that way.
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

private:
    void add(int rc) {
        if (rc != 0 && failed_ == 0)
            failed_ = rc;
    }
    scmp_filter_ctx ctx_;
    int failed_ = 0;
};

void add_rules(filter& f) {
    // No network: the only socket is the one to the parent, already open.
    f.deny({"socket", "socketpair", "connect", "bind", "listen", "accept", "accept4"});
    // No other program, and no other process: threads only.
    f.deny({"execve", "execveat", "fork", "vfork"});
    f.deny_without_bits("clone", 0, CLONE_THREAD);
    f.deny({"clone3"}, ENOSYS); // its flags are out of reach in a struct; glibc then uses clone
    // No one else's process: abort() signals its own thread, with tgkill on its own pid.
    f.deny({"kill", "tkill", "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_open", "pidfd_getfd",
            "pidfd_send_signal", "process_madvise"});
    f.deny_unless("tgkill", 0, static_cast<std::uint64_t>(::getpid()));
    // Files are read, never written, made, moved or removed.
    constexpr std::uint64_t writing = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND;
    f.deny_with_bits("open", 1, writing);
    f.deny_with_bits("openat", 2, writing);
    f.deny({"openat2"}, ENOSYS); // its flags are in a struct too; glibc's open uses openat
    f.deny({"creat", "mkdir", "mkdirat", "rmdir", "unlink", "unlinkat", "rename", "renameat", "renameat2", "link",
            "linkat", "symlink", "symlinkat", "mknod", "mknodat", "chmod", "fchmod", "fchmodat", "chown", "fchown",
            "fchownat", "lchown", "truncate", "utime", "utimes", "utimensat", "futimesat", "setxattr", "lsetxattr",
            "fsetxattr", "removexattr", "lremovexattr", "fremovexattr", "name_to_handle_at", "open_by_handle_at"});
    // Limits stay as set; privileges, mounts and namespaces as they are.
    f.deny({"setrlimit", "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setgroups",
            "setfsuid", "setfsgid", "capset", "mount", "umount2", "pivot_root", "chroot", "unshare", "setns",
            "move_mount", "open_tree", "fsopen", "fsmount", "fspick", "mount_setattr", "swapon", "swapoff", "reboot",
            "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "acct", "quotactl",
            "syslog", "personality"});
    f.deny_unless("prlimit64", 2, 0); // reading a limit passes no new one
    // Interfaces that run around this filter, or open the kernel wider.
    f.deny({"io_uring_setup", "io_uring_enter", "io_uring_register", "bpf", "perf_event_open", "userfaultfd",
            "keyctl", "add_key", "request_key", "fanotify_init"});
}

} // namespace

result<void> enter_catalog_sandbox(sandbox_limits const& limits) {
    if (auto ok = set_limit(RLIMIT_AS, limits.address_space, "its address space"); !ok)
        return ok;
    if (auto ok = set_limit(RLIMIT_CPU, limits.cpu_seconds, "its CPU time"); !ok)
        return ok;
    // A core of a process that read hostile bytes helps no one, and costs disk.
    rlimit no_core{0, 0};
    if (::setrlimit(RLIMIT_CORE, &no_core) != 0)
        return cannot("turn core dumps off", errno);
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return cannot("set no_new_privs", errno);
    filter f;
    if (!f.made())
        return cannot("make a seccomp filter", ENOMEM);
    add_rules(f);
    if (int rc = f.load(); rc != 0)
        return cannot("load its seccomp filter", -rc);
    return {};
}

} // namespace mirror::catalog
