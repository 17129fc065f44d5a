#pragma once
// A sink for the memory-budget tests of reads: collects the bytes and notes, at each
// delivered chunk, the chunk's size and what the budget had granted then.

#include "core/io/memory_budget.hpp"
#include "core/store/store.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

namespace mirror::test {

class budget_watching_sink final : public io::byte_sink {
public:
    explicit budget_watching_sink(io::memory_budget const& budget) : budget_(&budget) {}
    awaitable<result<void>> write(std::span<std::byte const> bytes) override {
        text.append(reinterpret_cast<char const*>(bytes.data()), bytes.size());
        largest_chunk = std::max(largest_chunk, bytes.size());
        most_granted = std::max(most_granted, budget_->in_use());
        co_return result<void>();
    }
    std::string text;
    std::size_t largest_chunk = 0;
    std::uint64_t most_granted = 0;

private:
    io::memory_budget const* budget_;
};

} // namespace mirror::test
