#pragma once
// Reading a whole object of a store as text, for the tests of stores.

#include "core/store/store.hpp"

#include <string>

namespace mirror::test {

/// Collects what a read delivers.
class string_sink final : public store::byte_sink {
public:
    awaitable<result<void>> write(std::span<std::byte const> bytes) override {
        text.append(reinterpret_cast<char const*>(bytes.data()), bytes.size());
        co_return result<void>();
    }
    std::string text;
};

/// The object at `key`, whole, or why it could not be read.
inline awaitable<result<std::string>> read_text(store::store& from, std::string key) {
    string_sink sink;
    auto done = co_await from.read(key, sink);
    if (!done)
        co_return done.error();
    co_return sink.text;
}

} // namespace mirror::test
