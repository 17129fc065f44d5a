#pragma once
// The process's own figures, as every Prometheus client library exports them
// (process_start_time_seconds, process_cpu_seconds_total, memory, file descriptors), read
// from /proc at each scrape. prometheus-cpp's core has no process collector.

#include <optional>

namespace mirror::daemon {

struct process_sample {
    double start_time_seconds = 0; ///< unix seconds
    double cpu_seconds = 0;        ///< user and system time so far
    double resident_bytes = 0;
    double virtual_bytes = 0;
    double open_fds = 0;
    double max_fds = 0;            ///< the soft limit
};

/// This process now; nullopt when /proc cannot be read (then the figures are left out).
std::optional<process_sample> sample_process();

} // namespace mirror::daemon
