#pragma once
// A store decorator that fails or kills the process at the N-th write: crash-consistency
// tests use it to stop a pass at every step. Production never wraps a store in it unless
// FDL_MIRROR_TEST_KILL_AFTER_WRITES is set (see daemon/main.cpp and docs/cli.md).

#include "core/store/forwarding_store.hpp"

#include <cstdint>
#include <memory>

namespace mirror::store {

enum class fault_action {
    fail, ///< the N-th commit or remove returns io::store_errc::io_error and changes nothing
    kill, ///< the N-th commit or remove happens, then the process dies by SIGKILL
};

/// Forwards everything to `inner`; counts commits, removes and conditional writes (the
/// writes a reader can see) and applies `action` at write number `at` (1-based). Reads
/// pass through.
class fault_store final : public forwarding_store {
public:
    fault_store(store& inner, std::uint64_t at, fault_action action);
    awaitable<result<std::unique_ptr<object_writer>>> open_writer(std::string key, write_mode mode) override;
    awaitable<result<void>> remove(std::string key) override;
    awaitable<result<std::string>> write_conditional(std::string key, std::string bytes,
                                                     std::optional<std::string> if_tag) override;

    /// Writes counted so far (commits and removes that went through).
    std::uint64_t writes() const { return writes_; }
    /// True once the fault was applied.
    bool tripped() const { return tripped_; }

private:
    friend class fault_writer;
    /// Called before a write becomes visible: true when it must fail instead.
    bool fail_now();
    /// Called after a write became visible: kills the process when it is the N-th.
    void after_write();
    std::uint64_t at_;
    fault_action action_;
    std::uint64_t writes_ = 0;
    bool tripped_ = false;
};

} // namespace mirror::store
