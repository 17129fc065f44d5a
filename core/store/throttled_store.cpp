#include "core/store/throttled_store.hpp"

#include "core/store/forwarding_store.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <algorithm>

namespace mirror::store {

pacer::pacer(double per_second) : per_second_(per_second) {
    // One second's worth may go at once, and at least one unit, so that a rate below
    // one per second still lets a request through.
    auto second = std::chrono::duration<double>(std::max(1.0, 1.0 / per_second_));
    burst_ = std::chrono::duration_cast<clock::duration>(second);
}

pacer::clock::duration pacer::delay_for(double units, clock::time_point now) {
    auto cost = std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(units / per_second_));
    booked_until_ = std::max(booked_until_, now) + cost;
    auto wait = booked_until_ - burst_ - now;
    return std::max(wait, clock::duration::zero());
}

namespace {

awaitable<void> sleep_for(pacer::clock::duration how_long) {
    if (how_long <= pacer::clock::duration::zero())
        co_return;
    net::steady_timer timer(co_await net::this_coro::executor, how_long);
    co_await timer.async_wait(use_op); // cancellation ends the wait early; the caller goes on
}

/// Passes bytes on to `inner` once the throttle lets them through.
class throttled_sink final : public io::byte_sink {
public:
    throttled_sink(io::byte_sink& inner, throttle& limits) : inner_(inner), limits_(limits) {}
    awaitable<result<void>> write(std::span<std::byte const> bytes) override {
        co_await limits_.bytes(bytes.size());
        co_return co_await inner_.write(bytes);
    }

private:
    io::byte_sink& inner_;
    throttle& limits_;
};

class throttled_writer final : public object_writer {
public:
    throttled_writer(std::unique_ptr<object_writer> inner, std::shared_ptr<throttle> limits)
        : inner_(std::move(inner)), limits_(std::move(limits)) {}
    awaitable<result<void>> write(std::span<std::byte const> bytes) override {
        co_await limits_->bytes(bytes.size());
        co_return co_await inner_->write(bytes);
    }
    awaitable<result<void>> commit() override {
        co_await limits_->request();
        co_return co_await inner_->commit();
    }

private:
    std::unique_ptr<object_writer> inner_;
    std::shared_ptr<throttle> limits_;
};

class throttled_store final : public forwarding_store {
public:
    throttled_store(std::unique_ptr<store> inner, std::shared_ptr<throttle> limits)
        : forwarding_store(std::move(inner)), limits_(std::move(limits)) {}
    awaitable<result<object_info>> stat(std::string key) override {
        co_await limits_->request();
        co_return co_await inner().stat(std::move(key));
    }
    awaitable<result<void>> read(std::string key, io::byte_sink& out) override {
        co_await limits_->request();
        throttled_sink paced(out, *limits_);
        co_return co_await inner().read(std::move(key), paced);
    }
    awaitable<result<void>> list(std::string prefix, std::function<result<void>(list_entry)> each) override {
        co_await limits_->request();
        co_return co_await inner().list(std::move(prefix), std::move(each));
    }
    awaitable<result<std::unique_ptr<object_writer>>> open_writer(std::string key, write_mode mode) override {
        auto opened = co_await inner().open_writer(std::move(key), mode);
        if (!opened)
            co_return opened.error();
        co_return std::unique_ptr<object_writer>(std::make_unique<throttled_writer>(std::move(*opened), limits_));
    }
    awaitable<result<void>> remove(std::string key) override {
        co_await limits_->request();
        co_return co_await inner().remove(std::move(key));
    }
    awaitable<result<std::size_t>> discard_incomplete_writes() override {
        co_await limits_->request();
        co_return co_await inner().discard_incomplete_writes();
    }
    awaitable<result<tagged_object>> read_tagged(std::string key, std::size_t limit) override {
        co_await limits_->request();
        auto read = co_await inner().read_tagged(std::move(key), limit);
        if (read)
            co_await limits_->bytes(read->bytes.size());
        co_return read;
    }
    awaitable<result<std::string>> write_conditional(std::string key, std::string bytes,
                                                     std::optional<std::string> if_tag) override {
        co_await limits_->request();
        co_await limits_->bytes(bytes.size());
        co_return co_await inner().write_conditional(std::move(key), std::move(bytes), std::move(if_tag));
    }

private:
    std::shared_ptr<throttle> limits_;
};

} // namespace

throttle::throttle(rate_limits limits) : limits_(limits) {
    if (limits_.requests_per_second)
        requests_.emplace(*limits_.requests_per_second);
    if (limits_.bytes_per_second)
        bytes_.emplace(static_cast<double>(*limits_.bytes_per_second));
}

awaitable<void> throttle::request() {
    if (requests_)
        co_await sleep_for(requests_->delay_for(1, pacer::clock::now()));
}

awaitable<void> throttle::bytes(std::size_t count) {
    if (bytes_)
        co_await sleep_for(bytes_->delay_for(static_cast<double>(count), pacer::clock::now()));
}

std::unique_ptr<store> throttled(std::unique_ptr<store> inner, std::shared_ptr<throttle> limits) {
    if (!limits || !limits->limits().any())
        return inner;
    return std::make_unique<throttled_store>(std::move(inner), std::move(limits));
}

} // namespace mirror::store
