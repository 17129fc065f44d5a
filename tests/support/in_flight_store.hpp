#pragma once
// A store decorator that holds each stat and read back a little, as a distant server
// answers late, and records how many were in flight at once: to prove that a caller
// overlaps its requests, and by how much at most.

#include "core/store/forwarding_store.hpp"

#include <chrono>
#include <cstddef>
#include <string>

namespace mirror::test {

class in_flight_store final : public mirror::store::forwarding_store {
public:
    explicit in_flight_store(mirror::store::store& inner, std::chrono::milliseconds delay = std::chrono::milliseconds(2))
        : forwarding_store(inner), delay_(delay) {}
    mirror::store::store_caps caps() const override;
    awaitable<result<mirror::store::object_info>> stat(std::string key) override;
    awaitable<result<void>> read(std::string key, mirror::io::byte_sink& out) override;
    awaitable<result<void>> list(std::string prefix, std::function<result<void>(mirror::store::list_entry)> each) override;

    /// Answers as a store that cannot list (an HTTP origin): the caller stats instead.
    bool hide_listing = false;
    std::size_t most_in_flight = 0; ///< the most stats and reads in flight at once
    std::size_t requests = 0;       ///< stats and reads started

private:
    awaitable<void> begin();
    std::chrono::milliseconds delay_;
    std::size_t in_flight_ = 0;
};

} // namespace mirror::test
