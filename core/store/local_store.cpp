#include "core/store/local_store.hpp"

#include "core/store/detail/posix_files.hpp"
#include "core/io/errors.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <dirent.h>
#include <fcntl.h>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

namespace mirror::store {

using detail::errno_error;
using detail::unique_fd;

// Large enough that syscalls and coroutine resumptions are a small share of a copy,
// small enough that many concurrent copies stay within the memory target.
static constexpr std::size_t read_chunk_bytes = 1024 * 1024;
/// A read's buffer up to this size, and any read's when the budget has no room, is kept
/// outside the memory budget: the floor every transfer needs to make progress.
static constexpr std::size_t small_read_chunk_bytes = 64 * 1024;
// Folders deeper than this are refused when listing: a hostile origin cannot make the
// walk hold an unbounded number of descriptors.
static constexpr int max_list_depth = 32;
static constexpr std::string_view temp_marker = ".fdl-tmp-";
// Reads and writes smaller than this run on the I/O thread: a round trip to the pool
// costs more than copying a few pages (measured with bench/folder_bench.sh: 4,000 small
// files spent most of their time handing work between threads).
static constexpr std::size_t offload_bytes = 256 * 1024;

namespace {

struct split_result {
    std::vector<std::string> folder;
    std::string name;
};

result<split_result> split_parent(std::string_view key, std::string const& store_name) {
    auto segments = detail::split_key(key, store_name);
    if (!segments)
        return segments.error();
    split_result out;
    out.name = std::move(segments->back());
    segments->pop_back();
    out.folder = std::move(*segments);
    return out;
}

std::string random_suffix() {
    static thread_local std::mt19937_64 generator{std::random_device{}()};
    static constexpr char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
    std::string out;
    for (int i = 0; i < 12; ++i)
        out.push_back(digits[generator() % 36]);
    return out;
}

/// Writes to an unnamed (O_TMPFILE) or hidden temporary file in the target folder.
class local_writer final : public object_writer {
public:
    local_writer(unique_fd folder, unique_fd file, std::string name, std::string temp_name, write_mode mode,
                 std::string what, io::blocking_pool* pool)
        : folder_(std::move(folder)), file_(std::move(file)), name_(std::move(name)),
          temp_name_(std::move(temp_name)), mode_(mode), what_(std::move(what)), pool_(pool) {}

    ~local_writer() override {
        if (!committed_ && !temp_name_.empty())
            ::unlinkat(folder_.get(), temp_name_.c_str(), 0);
    }

    awaitable<result<void>> write(std::span<std::byte const> bytes) override {
        int err = 0;
        std::function<void()> write_all = [&] {
            while (!bytes.empty()) {
                ssize_t n = ::write(file_.get(), bytes.data(), bytes.size());
                if (n < 0) {
                    if (errno == EINTR)
                        continue;
                    err = errno;
                    return;
                }
                bytes = bytes.subspan(static_cast<std::size_t>(n));
            }
        };
        co_await run_blocking(bytes.size() >= offload_bytes ? pool_ : nullptr, write_all);
        if (err != 0)
            co_return errno_error(err, what_);
        co_return result<void>();
    }

    awaitable<result<void>> commit() override {
        result<void> done;
        std::function<void()> make_durable = [&] {
            if (::fsync(file_.get()) != 0) {
                done = errno_error(errno, what_);
                return;
            }
            if (done = link_into_place(); !done)
                return;
            committed_ = true;
            // The new name must survive a crash too.
            if (::fsync(folder_.get()) != 0)
                done = errno_error(errno, what_);
        };
        co_await run_blocking(pool_, make_durable);
        co_return done;
    }

private:
    result<void> link_into_place() {
        if (temp_name_.empty()) {
            // Unnamed file: give it a name. For replace, a hidden name first, then rename.
            std::string target = mode_ == write_mode::create_only ? name_ : std::string(temp_marker) + random_suffix();
            std::string proc_path = "/proc/self/fd/" + std::to_string(file_.get());
            if (::linkat(AT_FDCWD, proc_path.c_str(), folder_.get(), target.c_str(), AT_SYMLINK_FOLLOW) != 0) {
                int err = errno;
                // Without /proc, AT_EMPTY_PATH does the same for a privileged process.
                if (err == ENOENT &&
                    ::linkat(file_.get(), "", folder_.get(), target.c_str(), AT_EMPTY_PATH) == 0)
                    err = 0;
                if (err != 0)
                    return errno_error(err, what_);
            }
            if (mode_ == write_mode::create_only)
                return {};
            temp_name_ = std::move(target);
        }
        if (mode_ == write_mode::create_only) {
            if (::linkat(folder_.get(), temp_name_.c_str(), folder_.get(), name_.c_str(), 0) != 0)
                return errno_error(errno, what_);
            ::unlinkat(folder_.get(), temp_name_.c_str(), 0);
        } else if (::renameat(folder_.get(), temp_name_.c_str(), folder_.get(), name_.c_str()) != 0) {
            return errno_error(errno, what_);
        }
        temp_name_.clear();
        return {};
    }

    unique_fd folder_;
    unique_fd file_;
    std::string name_;
    std::string temp_name_; ///< empty while the file is unnamed
    write_mode mode_;
    std::string what_;
    io::blocking_pool* pool_;
    bool committed_ = false;
};

} // namespace

local_store::local_store(int root_fd, std::filesystem::path root, bool writable, io::blocking_pool* pool)
    : root_fd_(root_fd), root_(std::move(root)), writable_(writable), pool_(pool) {}

local_store::~local_store() {
    ::close(root_fd_);
}

result<std::unique_ptr<local_store>> local_store::open(std::filesystem::path root, bool writable,
                                                      io::blocking_pool* pool) {
    std::error_code ec;
    if (writable && !std::filesystem::exists(root, ec))
        std::filesystem::create_directories(root, ec);
    if (ec)
        return errno_error(ec.value(), root.string());
    int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return errno_error(errno, root.string());
    return std::unique_ptr<local_store>(new local_store(fd, std::move(root), writable, pool));
}

store_caps local_store::caps() const {
    return {.can_list = true, .can_write = writable_, .create_only = writable_};
}

std::string local_store::describe() const {
    return root_.string();
}

awaitable<result<object_info>> local_store::stat(std::string key) {
    auto parts = split_parent(key, describe());
    if (!parts)
        co_return parts.error();
    auto folder = detail::open_folder(root_fd_, parts->folder, false, key);
    if (!folder)
        co_return folder.error();
    struct stat st {};
    if (::fstatat(folder->get(), parts->name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        co_return errno_error(errno, key);
    if (S_ISLNK(st.st_mode))
        co_return errno_error(ELOOP, key);
    if (!S_ISREG(st.st_mode))
        co_return make_error(io::store_errc::not_a_file, key + ": not a regular file");
    co_return object_info{static_cast<std::uint64_t>(st.st_size)};
}

awaitable<result<void>> local_store::read(std::string key, io::byte_sink& out) {
    auto parts = split_parent(key, describe());
    if (!parts)
        co_return parts.error();
    auto folder = detail::open_folder(root_fd_, parts->folder, false, key);
    if (!folder)
        co_return folder.error();
    unique_fd file(::openat(folder->get(), parts->name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!file)
        co_return errno_error(errno, key);
    struct stat st {};
    if (::fstat(file.get(), &st) != 0)
        co_return errno_error(errno, key);
    if (!S_ISREG(st.st_mode))
        co_return make_error(io::store_errc::not_a_file, key + ": not a regular file");
    ::posix_fadvise(file.get(), 0, 0, POSIX_FADV_SEQUENTIAL);

    std::size_t const wanted = std::min<std::uint64_t>(read_chunk_bytes, std::max<off_t>(st.st_size, 1));
    auto room = io::take_read_buffer(memory_, wanted, small_read_chunk_bytes, wanted);
    std::vector<std::byte> buffer(room.bytes);
    std::uint64_t total = 0;
    ssize_t n = 0;
    int err = 0;
    std::function<void()> read_chunk = [&] {
        do {
            n = ::read(file.get(), buffer.data(), buffer.size());
        } while (n < 0 && errno == EINTR);
        err = n < 0 ? errno : 0;
    };
    io::blocking_pool* read_pool = static_cast<std::uint64_t>(st.st_size) >= offload_bytes ? pool_ : nullptr;
    while (true) {
        co_await run_blocking(read_pool, read_chunk);
        if (n < 0)
            co_return errno_error(err, key);
        if (n == 0)
            break;
        total += static_cast<std::uint64_t>(n);
        auto sent = co_await out.write(std::span(buffer.data(), static_cast<std::size_t>(n)));
        if (!sent)
            co_return sent.error();
    }
    if (total != static_cast<std::uint64_t>(st.st_size))
        co_return make_error(io::store_errc::transient, key + ": changed size while being read");
    co_return result<void>();
}

static result<void> list_folder(int folder_fd, std::string const& prefix, int depth,
                                std::function<result<void>(list_entry)> const& each) {
    if (depth > max_list_depth)
        return make_error(io::store_errc::rejected, prefix + ": folders nested deeper than " +
                                                    std::to_string(max_list_depth) + " levels");
    int walk_fd = ::dup(folder_fd);
    if (walk_fd < 0)
        return errno_error(errno, prefix);
    DIR* dir = ::fdopendir(walk_fd);
    if (dir == nullptr) {
        ::close(walk_fd);
        return errno_error(errno, prefix);
    }
    std::unique_ptr<DIR, int (*)(DIR*)> dir_guard(dir, ::closedir);
    while (dirent* entry = ::readdir(dir)) {
        std::string_view name = entry->d_name;
        if (name == "." || name == ".." || name.find(temp_marker) != std::string_view::npos)
            continue;
        struct stat st {};
        if (::fstatat(folder_fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue; // removed while listing
        std::string key = prefix + std::string(name);
        if (S_ISDIR(st.st_mode)) {
            unique_fd child(::openat(folder_fd, entry->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (!child)
                return errno_error(errno, key);
            if (auto listed = list_folder(child.get(), key + "/", depth + 1, each); !listed)
                return listed;
        } else if (S_ISREG(st.st_mode)) {
            if (auto taken = each({std::move(key), static_cast<std::uint64_t>(st.st_size)}); !taken)
                return taken;
        }
        // Symbolic links and special files are not repository objects: not listed.
    }
    return {};
}

awaitable<result<void>> local_store::list(std::string prefix, std::function<result<void>(list_entry)> each) {
    std::vector<std::string> folder;
    if (!prefix.empty()) {
        if (!prefix.ends_with('/'))
            co_return make_error(io::store_errc::rejected, describe() + ": list prefix '" + prefix + "' must end in '/'");
        auto segments = detail::split_key(std::string_view(prefix).substr(0, prefix.size() - 1), describe());
        if (!segments)
            co_return segments.error();
        folder = std::move(*segments);
    }
    auto fd = detail::open_folder(root_fd_, folder, false, prefix);
    if (!fd) {
        if (fd.error().code == io::store_errc::not_found)
            co_return result<void>(); // nothing there yet
        co_return fd.error();
    }
    co_return list_folder(fd->get(), prefix, 0, each);
}

awaitable<result<std::unique_ptr<object_writer>>> local_store::open_writer(std::string key, write_mode mode) {
    if (!writable_)
        co_return make_error(io::store_errc::unsupported, describe() + ": opened read-only, cannot write " + key);
    auto parts = split_parent(key, describe());
    if (!parts)
        co_return parts.error();
    auto folder = detail::open_folder(root_fd_, parts->folder, true, key);
    if (!folder)
        co_return folder.error();
    std::string temp_name;
    unique_fd file(::openat(folder->get(), ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644));
    if (!file) {
        // File systems without O_TMPFILE: a hidden temporary name that listings skip.
        temp_name = "." + parts->name.substr(0, 100) + std::string(temp_marker) + random_suffix();
        file = unique_fd(::openat(folder->get(), temp_name.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644));
        if (!file)
            co_return errno_error(errno, key);
    }
    co_return std::unique_ptr<object_writer>(std::make_unique<local_writer>(
        std::move(*folder), std::move(file), std::move(parts->name), std::move(temp_name), mode, key, pool_));
}

awaitable<result<void>> local_store::remove(std::string key) {
    if (!writable_)
        co_return make_error(io::store_errc::unsupported, describe() + ": opened read-only, cannot delete " + key);
    auto parts = split_parent(key, describe());
    if (!parts)
        co_return parts.error();
    auto folder = detail::open_folder(root_fd_, parts->folder, false, key);
    if (!folder)
        co_return folder.error();
    if (::unlinkat(folder->get(), parts->name.c_str(), 0) != 0)
        co_return errno_error(errno, key);
    if (::fsync(folder->get()) != 0)
        co_return errno_error(errno, key);
    co_return result<void>();
}

} // namespace mirror::store
