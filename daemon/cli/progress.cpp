#include "daemon/cli/progress.hpp"

#include "daemon/common/terminal_text.hpp"

#include "daemon/cli/report_output.hpp"

#include <cstdio>
#include <unistd.h>

namespace mirror::daemon {

std::unique_ptr<tty_progress> tty_progress::create() {
    if (::isatty(STDERR_FILENO) == 0)
        return nullptr;
    return std::unique_ptr<tty_progress>(new tty_progress());
}

tty_progress::~tty_progress() {
    if (shown_)
        std::fputs("\r\033[K", stderr); // clear the line before the summary
}

void tty_progress::copying(std::string const& key, std::uint64_t) {
    show(key);
}

void tty_progress::copied(std::string const& key, std::uint64_t bytes) {
    files_ += 1;
    bytes_ += bytes;
    show(key);
}

void tty_progress::show(std::string const& key) {
    auto now = std::chrono::steady_clock::now();
    if (shown_ && now - last_shown_ < std::chrono::milliseconds(200))
        return;
    last_shown_ = now;
    shown_ = true;
    std::string shown_key = key.size() > 60 ? "…" + key.substr(key.size() - 59) : key;
    std::fprintf(stderr, "\r\033[K%llu file(s), %s: %s", static_cast<unsigned long long>(files_),
                 human_bytes(bytes_).c_str(), terminal_safe(shown_key, false).c_str());
    std::fflush(stderr);
}

} // namespace mirror::daemon
