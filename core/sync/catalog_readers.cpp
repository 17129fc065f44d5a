#include "core/sync/catalog_readers.hpp"

#include "core/io/blocking_pool.hpp"
#include "core/io/errors.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <functional>
#include <optional>
#include <vector>

namespace mirror::sync {

namespace {
std::atomic<std::uint64_t> process_catalogs{0}; ///< catalog_readers::process_counts
std::atomic<std::uint64_t> process_batches{0};
} // namespace

catalog_readers::catalog_readers(std::filesystem::path scratch_parent, std::size_t readers)
    : parent_(std::move(scratch_parent)) {
    readers_.resize(std::max<std::size_t>(readers, 1));
    threads_ = std::make_unique<io::blocking_pool>(readers_.size());
}

catalog_readers::~catalog_readers() {
    threads_.reset(); // joined: no read is left
    readers_.clear(); // each reader process stopped before its folder goes
    if (!root_.empty()) {
        std::error_code ignored;
        std::filesystem::remove_all(root_, ignored);
    }
    if (lock_fd_ >= 0)
        ::close(lock_fd_); // after the folder is gone: no one takes it for stale before
}

namespace {

constexpr std::string_view folder_prefix = "fdl-mirror-catalogs-";
constexpr char const* lock_name = "owner.lock";

/// Whether a readers' folder of `parent` was left by a process that is gone: its lock is
/// free (a lock is released when its process dies, however it died), or, for a folder of
/// a build before the lock, it is a day old.
bool is_stale(std::filesystem::path const& folder) {
    int fd = ::open((folder / lock_name).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        std::error_code ec;
        auto changed = std::filesystem::last_write_time(folder, ec);
        return !ec && std::filesystem::file_time_type::clock::now() - changed > std::chrono::hours(24);
    }
    bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
    ::close(fd);
    return free;
}

/// Removes the readers' folders of `parent` that this user's processes left when they
/// crashed (a daemon's PrivateTmp= hides them, a cron job's sync does not): catalog copies
/// of every repository read, left for ever otherwise. Returns how many.
std::size_t remove_stale_folders(std::filesystem::path const& parent) {
    std::size_t removed = 0;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
        auto name = it->path().filename().string();
        struct stat st{};
        if (!name.starts_with(folder_prefix) || ::lstat(it->path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
            st.st_uid != ::geteuid() || !is_stale(it->path()))
            continue;
        std::error_code ignored;
        if (std::filesystem::remove_all(it->path(), ignored) > 0)
            ++removed;
    }
    return removed;
}

/// Makes a readers' folder of `parent` with its lock file already locked (held in
/// `lock_fd` for the readers' life: a process that finds it free knows the folder is left
/// over). It is made and locked under a name the search for left-over folders skips, then
/// renamed: under its own name it is never seen unlocked, which another process making
/// its folder at that instant would take for left over and remove.
result<std::filesystem::path> make_locked_folder(std::filesystem::path const& parent, int& lock_fd) {
    std::string making = (parent / ".fdl-mirror-making-XXXXXX").string();
    if (::mkdtemp(making.data()) == nullptr)
        return make_error(io::store_errc::access_denied,
                          "cannot make a private folder for catalog copies in " + parent.string());
    std::error_code ignored;
    lock_fd = ::open((std::filesystem::path(making) / lock_name).c_str(),
                     O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (lock_fd < 0 || ::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
        std::filesystem::remove_all(making, ignored);
        return make_error(io::store_errc::access_denied, "cannot lock the folder for catalog copies " + making);
    }
    std::string const suffix = making.substr(making.size() - 6); // mkdtemp's: unique in `parent`
    auto const folder = parent / (std::string(folder_prefix) + suffix);
    // Never over another folder (rename would replace an empty one).
    if (::renameat2(AT_FDCWD, making.c_str(), AT_FDCWD, folder.c_str(), RENAME_NOREPLACE) != 0) {
        std::string const why = std::strerror(errno);
        std::filesystem::remove_all(making, ignored);
        return make_error(io::store_errc::access_denied,
                          "cannot make a private folder for catalog copies " + folder.string() + ": " + why);
    }
    return folder;
}

} // namespace

result<std::filesystem::path> catalog_readers::make_folder() {
    if (root_.empty()) {
        std::error_code ec;
        std::filesystem::path parent = parent_.empty() ? std::filesystem::temp_directory_path(ec) : parent_;
        if (ec)
            return make_error(io::store_errc::not_found, "no temporary folder for catalog copies: " + ec.message());
        stale_removed_ = remove_stale_folders(parent);
        auto made = make_locked_folder(parent, lock_fd_);
        if (!made)
            return made.error();
        root_ = std::move(*made);
        // Each reader starts its process on its first read.
        for (auto& reader : readers_) {
            reader = std::make_unique<catalog::sandboxed_reader>(reader_settings_);
            free_.push_back(reader.get());
        }
    }
    std::string pattern = (root_ / "pass-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
        return make_error(io::store_errc::access_denied,
                          "cannot make a private folder for catalog copies in " + root_.string());
    return std::filesystem::path(pattern);
}

void catalog_readers::set_reader_settings(catalog::reader_process_settings settings) {
    reader_settings_ = std::move(settings);
}

namespace {
/// Whose catalog a copy is: the pass folder (of make_folder()) it lies in.
std::string tenant_of(std::filesystem::path const& root, std::filesystem::path const& file) {
    auto relative = file.lexically_relative(root);
    return relative.empty() ? std::string() : relative.begin()->string();
}
} // namespace

struct catalog_readers::request {
    catalog::catalog_reader::batch_item item;
    std::optional<result<catalog::catalog_contents>> outcome; ///< under queue_mutex_
    std::exception_ptr failure;                             ///< under queue_mutex_: thrown by the read
    bool done = false;                                      ///< under queue_mutex_
};

awaitable<result<catalog::catalog_contents>> catalog_readers::read(std::filesystem::path file, std::string key,
                                                                  catalog::read_options options) {
    if (root_.empty())
        co_return make_error(io::store_errc::not_found, key + ": no catalog copies made yet");
    request mine{{std::move(file), std::move(key), std::move(options)}, std::nullopt, nullptr, false};
    {
        std::lock_guard lock(queue_mutex_);
        waiting_.push_back(&mine);
    }
    queue_changed_.notify_one(); // a thread waiting for another's batch can take it
    std::function<void()> work = [&] { serve(mine); };
    co_await threads_->run(work);
    if (mine.failure)
        std::rethrow_exception(mine.failure);
    co_return std::move(*mine.outcome);
}

void catalog_readers::serve(request& mine) {
    catalog::sandboxed_reader* reader = nullptr;
    {
        // As many threads as readers: one is always free for the thread that runs this.
        std::lock_guard lock(free_mutex_);
        reader = free_.back();
        free_.pop_back();
    }
    struct give_back {
        catalog_readers& owner;
        catalog::sandboxed_reader* reader;
        ~give_back() {
            std::lock_guard lock(owner.free_mutex_);
            owner.free_.push_back(reader);
        }
    } returned{*this, reader};
    std::unique_lock lock(queue_mutex_);
    // Each request has a task of its own on the threads, but a task may find its request
    // taken by another's batch: it then reads what waits, or waits for that batch.
    while (!mine.done) {
        if (waiting_.empty()) {
            queue_changed_.wait(lock);
            continue;
        }
        // A batch is one pass's: its reader process never sees another's catalogs.
        std::vector<request*> batch;
        std::string tenant = tenant_of(root_, waiting_.front()->item.file);
        for (auto at = waiting_.begin(); at != waiting_.end() && batch.size() < max_batch;) {
            if (tenant_of(root_, (*at)->item.file) != tenant) {
                ++at;
                continue;
            }
            batch.push_back(*at);
            at = waiting_.erase(at);
        }
        lock.unlock();
        std::vector<catalog::catalog_reader::batch_item> items;
        for (auto* r : batch)
            items.push_back(r->item);
        std::vector<result<catalog::catalog_contents>> outcomes;
        std::exception_ptr failure;
        try {
            outcomes = reader->read_batch(items, root_ / tenant);
        } catch (...) {
            failure = std::current_exception(); // std::bad_alloc: each of the batch sees it
        }
        lock.lock();
        for (std::size_t i = 0; i < batch.size(); ++i) {
            if (failure)
                batch[i]->failure = failure;
            else
                batch[i]->outcome = std::move(outcomes[i]);
            batch[i]->done = true;
        }
        counts_.catalogs += batch.size();
        counts_.batches += 1;
        process_catalogs.fetch_add(batch.size(), std::memory_order_relaxed);
        process_batches.fetch_add(1, std::memory_order_relaxed);
        queue_changed_.notify_all();
    }
}

catalog_readers::counts catalog_readers::process_counts() {
    return {process_catalogs.load(std::memory_order_relaxed), process_batches.load(std::memory_order_relaxed)};
}

catalog_readers::counts catalog_readers::read_counts() const {
    std::lock_guard lock(queue_mutex_);
    return counts_;
}

} // namespace mirror::sync
