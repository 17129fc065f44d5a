#include "tests/support/in_flight_store.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <algorithm>

namespace mirror::test {

mirror::store::store_caps in_flight_store::caps() const {
    auto caps = inner().caps();
    if (hide_listing)
        caps.can_list = false;
    return caps;
}

// Counts the request in, then waits: a request that overlaps another is in flight with it
// for the whole delay, whatever the inner store's own timing.
awaitable<void> in_flight_store::begin() {
    requests += 1;
    in_flight_ += 1;
    most_in_flight = std::max(most_in_flight, in_flight_);
    net::steady_timer late(co_await net::this_coro::executor, delay_);
    co_await late.async_wait(use_op);
}

awaitable<result<mirror::store::object_info>> in_flight_store::stat(std::string key) {
    co_await begin();
    auto found = co_await inner().stat(std::move(key));
    in_flight_ -= 1;
    co_return found;
}

awaitable<result<void>> in_flight_store::read(std::string key, mirror::io::byte_sink& out) {
    co_await begin();
    auto done = co_await inner().read(std::move(key), out);
    in_flight_ -= 1;
    co_return done;
}

awaitable<result<void>> in_flight_store::list(std::string prefix,
                                              std::function<result<void>(mirror::store::list_entry)> each) {
    if (hide_listing) // as caps() says: the store's own refusal, unsupported
        return mirror::store::store::list(std::move(prefix), std::move(each));
    return inner().list(std::move(prefix), std::move(each));
}

} // namespace mirror::test
