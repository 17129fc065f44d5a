#pragma once
// A repository in a local folder: the embedded default store.

#include "core/io/blocking_pool.hpp"
#include "core/io/memory_budget.hpp"
#include "core/store/store.hpp"

#include <filesystem>
#include <memory>

namespace mirror::store {

/// A folder. Reads never follow symbolic links below the root (a link is refused with
/// store_errc::rejected, "is a symbolic link"); writes go to an unnamed temporary file
/// (O_TMPFILE, or a hidden ".fdl-tmp-" file where the file system lacks it), are fsynced,
/// and appear under their key only complete: linked without overwrite for create_only,
/// renamed over for replace; the folder is fsynced after. A process killed mid-write
/// leaves no partial file under any key.
class local_store final : public store {
public:
    /// Opens `root`. A writable store creates the folder when absent. Reads, writes and
    /// fsyncs of object bytes run on `pool` when one is given (it must outlive the store),
    /// inline otherwise. Fails with not_found / access_denied / rejected (not a folder).
    static result<std::unique_ptr<local_store>> open(std::filesystem::path root, bool writable,
                                                     io::blocking_pool* pool = nullptr);
    ~local_store() override;

    /// The process's memory budget: a read's buffer past 64 KiB (up to 1 MiB) is granted
    /// from it while half of it is free, never waited for (the read may be feeding an
    /// upload that waits for budget); without room the file is read in 64 KiB chunks.
    /// Null (the default): no budget. It must outlive the store.
    void set_memory(io::memory_budget* memory) { memory_ = memory; }

    store_caps caps() const override;
    std::string describe() const override;
    awaitable<result<object_info>> stat(std::string key) override;
    awaitable<result<void>> read(std::string key, io::byte_sink& out) override;
    awaitable<result<void>> list(std::string prefix, std::function<result<void>(list_entry)> each) override;
    awaitable<result<std::unique_ptr<object_writer>>> open_writer(std::string key, write_mode mode) override;
    awaitable<result<void>> remove(std::string key) override;

private:
    local_store(int root_fd, std::filesystem::path root, bool writable, io::blocking_pool* pool);
    int root_fd_;
    std::filesystem::path root_;
    bool writable_;
    io::blocking_pool* pool_;
    io::memory_budget* memory_ = nullptr;
};

} // namespace mirror::store
