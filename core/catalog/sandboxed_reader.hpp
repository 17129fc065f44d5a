#pragma once
// Reads catalogs in a sandboxed reader process (catalog_worker.hpp) and takes its answers
// as outside input: what a catalog does to DuckDB there (a crash, a hang, memory without
// bound, a subverted reader answering lies about paths) becomes a failure of that catalog,
// never of this process (docs/design.md, "The catalog sandbox").

#include "core/catalog/catalog_reader.hpp"
#include "verify/error.hpp"

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace mirror::catalog {

struct reader_process_settings {
    /// The program to run as the reader; it must call serve_catalog_worker_if_asked() first
    /// thing in main(). This process's own binary unless a test says otherwise.
    std::filesystem::path program = "/proc/self/exe";
    /// Catalogs a reader serves before it is replaced (which bounds its CPU limit).
    std::size_t max_catalogs = 64;
    /// The largest answer accepted (a catalog of a million files is about 100 MiB of it).
    std::uint64_t max_answer_bytes = std::uint64_t{512} << 20;
    /// How long a new reader may take to say it is sandboxed and ready.
    std::chrono::milliseconds startup_limit{15'000};
    /// Entries added to the reader's environment, which holds nothing of this process's
    /// but a sanitizer's options: for tests only (the sandbox's regression suite preloads
    /// a stand-in for an exploit with LD_PRELOAD). Never set from configuration.
    std::vector<std::string> environment;
    /// Past each catalog's time limit, how long the reader may take before it is killed
    /// (its own watchdog interrupts DuckDB at the limit; this is the last resort).
    std::chrono::milliseconds grace{5'000};
};

/// The address space a reader gets for DuckDB's `memory_limit` ("256MB", "1GiB"): that plus
/// what the program and its libraries map; 0 (no limit) in sanitized builds or when the
/// text is not a size.
std::uint64_t reader_address_space(std::string const& memory_limit);

/// One reader process at a time, started on first need and replaced when it failed, served
/// another folder, asked for other limits, or served max_catalogs; from the second reader on,
/// the next one is started ahead (a spare), so that a pass does not wait for a program to
/// load. Blocking, and not thread-safe: use it from one thread at a time, off the I/O
/// thread.
class sandboxed_reader {
public:
    explicit sandboxed_reader(reader_process_settings settings = {});
    /// Kills the reader, if any, and reaps it.
    ~sandboxed_reader();
    sandboxed_reader(sandboxed_reader const&) = delete;
    sandboxed_reader& operator=(sandboxed_reader const&) = delete;

    /// What catalog_reader::read_batch gives, read in the reader process. The files lie in
    /// `folder` (a pass's private folder), the only one the reader may open files in; a
    /// reader never serves two folders, so one subverted by a catalog cannot answer for
    /// another pass's. Each file is opened here (never through a link) and passed as a
    /// descriptor.
    /// When the reader dies, overruns or answers garbage, the batch is read again one
    /// catalog per new reader, so that the failure lands on the catalog that caused it:
    /// catalog_errc::reader_crashed (naming the signal or exit status, or the garbage) or
    /// reader_limit (a time, CPU or memory limit, or an answer past max_answer_bytes).
    std::vector<result<catalog_contents>> read_batch(std::vector<catalog_reader::batch_item> const& items,
                                                     std::filesystem::path const& folder);

    /// Readers that failed, process-wide, since it started (the daemon's metrics).
    struct failure_counts {
        std::uint64_t crashed = 0;
        std::uint64_t limited = 0;
        std::uint64_t started = 0;
    };
    static failure_counts process_failures();

private:
    /// One reader process, with the limits it was started with.
    struct reader_process {
        pid_t pid = -1;
        int socket = -1;
        std::string memory_limit;
        std::chrono::milliseconds time_limit{0};
    };
    /// Starts a reader process for DuckDB's `memory_limit`, with CPU for catalogs of
    /// `time_limit`; does not wait for its hello.
    result<reader_process> spawn(std::string const& memory_limit, std::chrono::milliseconds time_limit);
    /// Makes a reader the running one (the spare, when it has these limits) and waits for
    /// its hello. (read_batch spawns the next spare after a read, from the second start on.)
    result<void> start(std::string const& memory_limit, std::chrono::milliseconds time_limit);
    /// Kills the running reader (when still running) and reaps it; returns its wait status.
    int stop();
    /// Kills `process` (when running) and reaps it; returns its wait status.
    static int end(reader_process& process);
    /// One request and its answer, on the running reader; an error when it failed.
    result<std::vector<result<catalog_contents>>> exchange(std::vector<catalog_reader::batch_item> const& items,
                                                           std::string const& folder);
    /// The reader failed (reading for `who`): kills and reaps it, and says why.
    error failure(std::string const& who, bool timed_out, std::string const& detail = {});

    reader_process_settings settings_;
    reader_process running_;
    reader_process spare_; ///< started ahead for the next folder, from the second start on
    std::size_t starts_ = 0;
    std::string folder_; ///< the one the running reader serves
    std::size_t served_ = 0;
};

} // namespace mirror::catalog
