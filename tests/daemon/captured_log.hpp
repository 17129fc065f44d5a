#pragma once
// The daemon's log kept in memory, for tests that read what a job or a lease said.

#include "daemon/common/log.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace mirror::test {

class captured_log {
public:
    explicit captured_log(config::log_format format = config::log_format::plain)
        : out_(open_memstream(&text_, &size_)), log(config::log_settings{format, config::log_level::debug}, out_) {}
    ~captured_log() {
        std::fclose(out_);
        std::free(text_);
    }
    captured_log(captured_log const&) = delete;
    captured_log& operator=(captured_log const&) = delete;

    /// Everything logged so far.
    std::string read() {
        std::fflush(out_);
        return std::string(text_, size_);
    }

private:
    char* text_ = nullptr;
    std::size_t size_ = 0;
    std::FILE* out_;

public:
    daemon::logger log; ///< after out_, which it writes to
};

} // namespace mirror::test
