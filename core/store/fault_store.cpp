#include "core/store/fault_store.hpp"

#include "core/io/errors.hpp"

#include <csignal>

namespace mirror::store {

class fault_writer final : public object_writer {
public:
    fault_writer(fault_store& owner, std::unique_ptr<object_writer> inner, std::string key)
        : owner_(owner), inner_(std::move(inner)), key_(std::move(key)) {}
    awaitable<result<void>> write(std::span<std::byte const> bytes) override { return inner_->write(bytes); }
    awaitable<result<void>> commit() override {
        if (owner_.fail_now())
            co_return make_error(io::store_errc::io_error, key_ + ": injected failure");
        auto done = co_await inner_->commit();
        if (done)
            owner_.after_write();
        co_return done;
    }

private:
    fault_store& owner_;
    std::unique_ptr<object_writer> inner_;
    std::string key_;
};

fault_store::fault_store(store& inner, std::uint64_t at, fault_action action)
    : forwarding_store(inner), at_(at), action_(action) {}

awaitable<result<std::unique_ptr<object_writer>>> fault_store::open_writer(std::string key, write_mode mode) {
    auto writer = co_await inner().open_writer(key, mode);
    if (!writer)
        co_return writer.error();
    co_return std::unique_ptr<object_writer>(std::make_unique<fault_writer>(*this, std::move(*writer), key));
}

awaitable<result<void>> fault_store::remove(std::string key) {
    if (fail_now())
        co_return make_error(io::store_errc::io_error, key + ": injected failure");
    auto done = co_await inner().remove(key);
    if (done)
        after_write();
    co_return done;
}

awaitable<result<std::string>> fault_store::write_conditional(std::string key, std::string bytes,
                                                              std::optional<std::string> if_tag) {
    if (fail_now())
        co_return make_error(io::store_errc::io_error, key + ": injected failure");
    auto done = co_await inner().write_conditional(key, std::move(bytes), std::move(if_tag));
    if (done)
        after_write();
    co_return done;
}

bool fault_store::fail_now() {
    if (action_ != fault_action::fail || writes_ + 1 != at_)
        return false;
    tripped_ = true;
    return true;
}

void fault_store::after_write() {
    ++writes_;
    if (action_ == fault_action::kill && writes_ == at_) {
        tripped_ = true;
        std::raise(SIGKILL); // no destructor, no flush: as abrupt as a power cut for the process
    }
}

} // namespace mirror::store
