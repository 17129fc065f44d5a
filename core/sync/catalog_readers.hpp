#pragma once
// The catalog readers of a process: a fixed number of threads, each driving one sandboxed
// reader process (catalog/sandboxed_reader.hpp) with one DuckDB database, that read the
// catalogs of every pass and audit in the order asked. However many repositories pass at
// once, catalogs cost these threads and these processes (each within its limits), never
// one per pass. Catalogs of one pass waiting when a reader comes free are read together
// (catalog_reader::read_batch), which costs each a fraction of a read alone. A reader
// process serves one pass at a time: another pass's catalogs get a new one.

#include "core/catalog/catalog_reader.hpp"
#include "core/catalog/sandboxed_reader.hpp"
#include "core/io/net.hpp"
#include "verify/error.hpp"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace mirror::io {
class blocking_pool;
}

namespace mirror::sync {

class catalog_readers {
public:
    /// Private copies go into a folder made (mode 0700) in `scratch_parent` (the system's
    /// temporary folder when empty) on first need; `readers` threads read them (at least 1).
    /// Before it is made, the folders that crashed processes of this user left there are
    /// removed (their lock is free).
    catalog_readers(std::filesystem::path scratch_parent, std::size_t readers);
    /// Joins the threads (a read in progress ends first) and removes the folder.
    ~catalog_readers();
    catalog_readers(catalog_readers const&) = delete;
    catalog_readers& operator=(catalog_readers const&) = delete;

    /// A new private folder inside the readers' folder, for one pass's or audit's copies:
    /// the readers' databases can read below it and nowhere else. Call it from the I/O
    /// thread.
    result<std::filesystem::path> make_folder();

    /// Reads `file` (below a folder of make_folder()) on the first free reader thread; reads
    /// wait their turn, first come first served, and a free reader takes up to
    /// `max_batch` waiting reads at once. Never on the I/O thread: a read takes tens of
    /// milliseconds (seconds under a sanitizer), and requests in flight meanwhile must not
    /// see their deadlines pass.
    awaitable<result<catalog::catalog_contents>> read(std::filesystem::path file, std::string key,
                                                      catalog::read_options options);

    /// The most catalogs read together: each stays attached until all are read.
    static constexpr std::size_t max_batch = 8;

    /// Catalogs read so far, and the batches they were read in (for the benchmarks and
    /// tests). Thread-safe.
    struct counts {
        std::uint64_t catalogs = 0;
        std::uint64_t batches = 0;
    };
    /// The reader processes that ran for a test (a program of its own); applies to the
    /// readers started after the call. Call it before the first read.
    void set_reader_settings(catalog::reader_process_settings settings);
    counts read_counts() const;
    /// The same for every catalog_readers of the process since it started (the daemon's
    /// metrics: a reload replaces its readers). Thread-safe.
    static counts process_counts();
    /// The left-over folders removed before this one's was made.
    std::size_t stale_folders_removed() const { return stale_removed_; }

private:
    struct request;
    /// Reads waiting requests on a reader of this thread until `mine` is read.
    void serve(request& mine);
    std::filesystem::path parent_;
    std::filesystem::path root_; ///< made on the first make_folder()
    int lock_fd_ = -1;           ///< root_'s owner.lock, held while root_ is ours
    std::size_t stale_removed_ = 0;
    std::mutex free_mutex_;
    catalog::reader_process_settings reader_settings_;
    std::vector<std::unique_ptr<catalog::sandboxed_reader>> readers_;
    std::vector<catalog::sandboxed_reader*> free_; ///< under free_mutex_: readers no thread is using
    mutable std::mutex queue_mutex_;
    std::condition_variable queue_changed_; ///< a read was asked, or a batch was read
    std::deque<request*> waiting_;          ///< under queue_mutex_, first come first
    counts counts_;                         ///< under queue_mutex_
    std::unique_ptr<io::blocking_pool> threads_;
};

} // namespace mirror::sync
