#pragma once
// The base of every store wrapper (faults, throttling, fencing, the tests' counters): it
// forwards each call to the store it wraps, so that a wrapper overrides only what it
// changes, and a call added to `store` later reaches the wrapped store through every
// wrapper instead of falling to the base's "unsupported" (how conditional writes were
// lost in two of them: issue 33).

#include "core/store/store.hpp"

#include <memory>

namespace mirror::store {

class forwarding_store : public store {
public:
    /// Wraps `inner`, which this store owns.
    explicit forwarding_store(std::unique_ptr<store> inner);
    /// Wraps `inner`, which outlives this store.
    explicit forwarding_store(store& inner);

    store_caps caps() const override;
    std::string describe() const override;
    std::string server() const override;
    object_memory* remembered() override;
    awaitable<result<object_info>> stat(std::string key) override;
    awaitable<result<void>> read(std::string key, io::byte_sink& out) override;
    awaitable<result<void>> list(std::string prefix, std::function<result<void>(list_entry)> each) override;
    awaitable<result<std::unique_ptr<object_writer>>> open_writer(std::string key, write_mode mode) override;
    awaitable<result<void>> remove(std::string key) override;
    awaitable<result<std::size_t>> discard_incomplete_writes() override;
    awaitable<result<tagged_object>> read_tagged(std::string key, std::size_t limit) override;
    awaitable<result<std::string>> write_conditional(std::string key, std::string bytes,
                                                     std::optional<std::string> if_tag) override;

protected:
    store& inner() const { return *inner_; }

private:
    std::unique_ptr<store> owned_;
    store* inner_;
};

} // namespace mirror::store
