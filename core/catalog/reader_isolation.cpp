#include "core/catalog/detail/reader_isolation.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace mirror::catalog::detail {

namespace {

/// The namespaces a reader takes: everything but PID (its threads must stay in the PID
/// namespace they are born in) and time.
constexpr int reader_namespaces =
    CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;

std::string failure(std::string const& what, int err = errno) { return what + " (" + std::strerror(err) + ")"; }

/// Writes `text` to a /proc file of this process; an error text, or empty.
std::string write_proc(char const* path, std::string const& text) {
    int fd = ::open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return failure(std::string("open ") + path);
    bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    int err = errno;
    ::close(fd);
    return ok ? std::string() : failure(std::string("write ") + path, err);
}

// Landlock's interface as the kernel defines it (include/uapi/linux/landlock.h, Linux
// 6.12); Debian 12's headers stop at ABI 2, so the later fields are spelled out here.
struct landlock_ruleset {
    std::uint64_t handled_access_fs = 0;
    std::uint64_t handled_access_net = 0; // ABI 4
    std::uint64_t scoped = 0;             // ABI 6
};
struct [[gnu::packed]] landlock_beneath {
    std::uint64_t allowed_access = 0;
    std::int32_t parent_fd = -1;
};
constexpr unsigned landlock_version_flag = 1U << 0;
constexpr int landlock_rule_path_beneath = 1;
constexpr std::uint64_t fs_write_file = 1ULL << 1, fs_read_file = 1ULL << 2, fs_read_dir = 1ULL << 3,
                        fs_remove_file = 1ULL << 5, fs_make_reg = 1ULL << 8;
constexpr std::uint64_t scope_abstract_unix_socket = 1ULL << 0, scope_signal = 1ULL << 1;

/// Every file system right of `abi`: what the ruleset handles (so denies unless a rule
/// allows it).
std::uint64_t handled_fs(int abi) {
    std::uint64_t all = (1ULL << 13) - 1; // ABI 1: execute … make_sym
    if (abi >= 2)
        all |= 1ULL << 13; // refer
    if (abi >= 3)
        all |= 1ULL << 14; // truncate
    if (abi >= 5)
        all |= 1ULL << 15; // ioctl_dev
    return all;
}

} // namespace

uid_t reader_own_id(pid_t pid) {
    // 0x7f000000 onwards: Debian's accounts stop at 60000-65535, systemd's dynamic users
    // at 65519 and its container ranges at 0x6fffffff (systemd's UIDS-GIDS.md).
    return static_cast<uid_t>(0x7f000000U + (static_cast<std::uint32_t>(pid) & 0x3fffffU));
}

std::string leave_root() {
    if (::geteuid() != 0)
        return {};
    // The bounding set first, while CAP_SETPCAP is there to drop it.
    for (int cap = 0; cap <= CAP_LAST_CAP; ++cap)
        if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
            return failure("drop the capability bounding set");
    uid_t id = reader_own_id(::getpid());
    if (::setgroups(0, nullptr) != 0)
        return failure("leave its supplementary groups");
    if (::setresgid(id, id, id) != 0)
        return failure("take a group of its own");
    if (::setresuid(id, id, id) != 0)
        return failure("take a user of its own");
    // Changing user made it undumpable, which gives its /proc files to root: it could not
    // write its own uid_map. The sandbox makes it undumpable again once that is done.
    if (::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0)
        return failure("write its own /proc files");
    return {};
}

bool own_user_gets_namespaces() {
    pid_t child = ::fork();
    if (child < 0)
        return false;
    if (child == 0) {
        bool ok = leave_root().empty() && ::unshare(reader_namespaces) == 0;
        ::_exit(ok ? 0 : 1);
    }
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool enter_private_root(unsigned long long scratch_bytes, std::string& why_not, std::string& failed) {
    uid_t uid = ::geteuid();
    gid_t gid = ::getegid();
    if (::unshare(reader_namespaces) != 0) {
        why_not = failure("the kernel refused new namespaces");
        return false;
    }
    // From here on the process is in namespaces of its own: any failure is fatal, since
    // it cannot go back to fall back.
    auto fail = [&](std::string what) {
        failed = std::move(what);
        return false;
    };
    // The same ids inside as outside, so that its tmpfs files have an owner.
    if (auto e = write_proc("/proc/self/setgroups", "deny"); !e.empty())
        return fail(e);
    if (auto e = write_proc("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1\n"); !e.empty())
        return fail(e);
    if (auto e = write_proc("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1\n"); !e.empty())
        return fail(e);
    // Its mounts stay its own, and its root becomes an empty tmpfs, mounted first on /tmp
    // (any folder would do; /tmp is on every system) and then made the root.
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
        return fail(failure("make its mounts private"));
    std::string options = "size=" + std::to_string(scratch_bytes) + ",nr_inodes=64,mode=0700";
    if (::mount("fdl-catalog-reader", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, options.c_str()) != 0)
        return fail(failure("mount its private root"));
    if (::mkdir((std::string("/tmp") + private_catalogs).c_str(), 0700) != 0 || ::mkdir("/tmp/.old", 0700) != 0)
        return fail(failure("make its catalogs' folder"));
    if (::syscall(SYS_pivot_root, "/tmp", "/tmp/.old") != 0)
        return fail(failure("make its private root the root"));
    if (::chdir("/") != 0)
        return fail(failure("enter its private root"));
    // The host's file system goes: nothing of it stays reachable, /proc included.
    if (::umount2("/.old", MNT_DETACH) != 0 || ::rmdir("/.old") != 0)
        return fail(failure("leave the host's file system"));
    return true;
}

std::string drop_capabilities() {
    for (int cap = 0; cap <= CAP_LAST_CAP; ++cap)
        if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL && errno != EPERM)
            return failure("drop the capability bounding set");
    if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
        return failure("clear its ambient capabilities");
    // Without CAP_SETPCAP (a reader that was never root nor in a namespace) the
    // securebits cannot be set, and there is nothing for them to guard.
    constexpr unsigned long locked = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                                     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                                     SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
    if (::prctl(PR_SET_SECUREBITS, locked, 0, 0, 0) != 0 && errno != EPERM)
        return failure("lock its securebits");
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3] = {};
    if (::syscall(SYS_capset, &header, none) != 0)
        return failure("drop its capabilities");
    return {};
}

int landlock_abi() {
    long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, landlock_version_flag);
    return abi > 0 ? static_cast<int>(abi) : 0;
}

std::string landlock_confine(std::string const& read_root, bool writable) {
    int abi = landlock_abi();
    if (abi == 0)
        return "unsupported";
    landlock_ruleset ruleset;
    ruleset.handled_access_fs = handled_fs(abi);
    std::size_t size = sizeof(std::uint64_t); // ABI 1 to 3: file system rights only
    if (abi >= 4) {
        ruleset.handled_access_net = (1ULL << 0) | (1ULL << 1); // bind and connect over TCP: none
        size = 2 * sizeof(std::uint64_t);
    }
    if (abi >= 6) {
        ruleset.scoped = scope_abstract_unix_socket | scope_signal;
        size = sizeof(ruleset);
    }
    int set = static_cast<int>(::syscall(SYS_landlock_create_ruleset, &ruleset, size, 0));
    if (set < 0)
        return failure("make a Landlock ruleset");
    struct closer {
        int fd;
        ~closer() { ::close(fd); }
    } set_closed{set};
    landlock_beneath beneath;
    beneath.allowed_access = fs_read_file | fs_read_dir;
    if (writable)
        beneath.allowed_access |= fs_write_file | fs_make_reg | fs_remove_file | (abi >= 3 ? 1ULL << 14 : 0);
    beneath.parent_fd = ::open(read_root.c_str(), O_PATH | O_CLOEXEC | O_DIRECTORY);
    if (beneath.parent_fd < 0)
        return failure("open " + read_root + " for Landlock");
    struct closer root_closed{beneath.parent_fd};
    if (::syscall(SYS_landlock_add_rule, set, landlock_rule_path_beneath, &beneath, 0) != 0)
        return failure("allow " + read_root + " in Landlock");
    if (::syscall(SYS_landlock_restrict_self, set, 0) != 0)
        return failure("enter its Landlock domain");
    return {};
}

isolation isolate_reader(unsigned long long scratch_bytes) {
    isolation out;
    // Without namespaces, a user of its own could not open the pass's folder (root's,
    // 0700): root then keeps uid 0, with no capability, under Landlock and the filter.
    if (::geteuid() == 0 && !own_user_gets_namespaces()) {
        out.why_not = "the kernel refused new namespaces to a user of its own; it keeps uid 0, with no capability";
        return out;
    }
    if (out.failed = leave_root(); !out.failed.empty())
        return out;
    out.private_root = enter_private_root(scratch_bytes, out.why_not, out.failed);
    return out;
}

} // namespace mirror::catalog::detail
