#include "daemon/metrics/process_metrics.hpp"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace mirror::daemon {

namespace {

/// The host's boot time (unix seconds), from /proc/stat's btime line.
std::optional<double> boot_time() {
    std::ifstream in("/proc/stat");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("btime ", 0) == 0)
            return std::stod(line.substr(6));
    return std::nullopt;
}

double open_fds() {
    DIR* dir = ::opendir("/proc/self/fd");
    if (dir == nullptr)
        return 0;
    double n = 0;
    while (dirent* entry = ::readdir(dir))
        if (entry->d_name[0] != '.')
            ++n;
    ::closedir(dir);
    return n - 1; // the directory's own descriptor, open while it is read
}

} // namespace

std::optional<process_sample> sample_process() {
    std::ifstream in("/proc/self/stat");
    std::string stat;
    if (!std::getline(in, stat))
        return std::nullopt;
    // The command name (field 2) may hold spaces and parentheses: fields are counted after
    // its closing one. Field 3 is the state; starttime is 22, vsize 23, rss (pages) 24.
    auto close = stat.rfind(')');
    if (close == std::string::npos)
        return std::nullopt;
    std::istringstream fields(stat.substr(close + 2));
    std::string field;
    double values[25] = {};
    for (int number = 3; number <= 24 && fields >> field; ++number) {
        try {
            values[number] = std::stod(field);
        } catch (...) {
            values[number] = 0; // the state letter
        }
    }
    auto boot = boot_time();
    long const ticks = ::sysconf(_SC_CLK_TCK);
    long const page = ::sysconf(_SC_PAGESIZE);
    if (!boot || ticks <= 0 || page <= 0)
        return std::nullopt;
    process_sample out;
    // getrusage counts CPU in microseconds; /proc's utime and stime only in clock ticks
    // (10 ms), which a young process may not have used yet.
    rusage usage{};
    if (::getrusage(RUSAGE_SELF, &usage) == 0)
        out.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                          static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
    out.start_time_seconds = *boot + values[22] / static_cast<double>(ticks);
    out.virtual_bytes = values[23];
    out.resident_bytes = values[24] * static_cast<double>(page);
    out.open_fds = open_fds();
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) == 0)
        out.max_fds = limit.rlim_cur == RLIM_INFINITY ? 0 : static_cast<double>(limit.rlim_cur);
    return out;
}

} // namespace mirror::daemon
