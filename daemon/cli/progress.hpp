#pragma once
// Progress on a terminal for long copies and audits: one line on stderr, rewritten.

#include "core/sync/report.hpp"

#include <chrono>
#include <cstdint>
#include <memory>

namespace mirror::daemon {

/// Shows the object being copied and the running totals on stderr, at most five times a
/// second, and only when stderr is a terminal (create() returns nullptr otherwise).
class tty_progress final : public sync::sync_observer {
public:
    static std::unique_ptr<tty_progress> create();
    ~tty_progress() override;
    void copying(std::string const& key, std::uint64_t bytes_expected) override;
    void copied(std::string const& key, std::uint64_t bytes) override;

private:
    tty_progress() = default;
    void show(std::string const& key);
    std::uint64_t files_ = 0;
    std::uint64_t bytes_ = 0;
    std::chrono::steady_clock::time_point last_shown_{};
    bool shown_ = false;
};

} // namespace mirror::daemon
