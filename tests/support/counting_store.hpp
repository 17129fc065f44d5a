#pragma once
// A store decorator that counts calls, to prove how much a pass reads.

#include "core/store/forwarding_store.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace mirror::test {

class counting_store final : public mirror::store::forwarding_store {
public:
    explicit counting_store(mirror::store::store& inner) : forwarding_store(inner) {}
    awaitable<result<mirror::store::object_info>> stat(std::string key) override;
    awaitable<result<void>> read(std::string key, mirror::io::byte_sink& out) override;
    awaitable<result<void>> list(std::string prefix, std::function<result<void>(mirror::store::list_entry)> each) override;
    awaitable<result<std::unique_ptr<mirror::store::object_writer>>> open_writer(std::string key,
                                                                         mirror::store::write_mode mode) override;
    awaitable<result<void>> remove(std::string key) override;
    awaitable<result<mirror::store::tagged_object>> read_tagged(std::string key, std::size_t limit) override;
    awaitable<result<std::string>> write_conditional(std::string key, std::string bytes,
                                                     std::optional<std::string> if_tag) override;

    std::vector<std::string> reads;   ///< keys read, in order
    std::vector<std::string> stats;
    std::vector<std::string> lists;   ///< prefixes listed
    std::vector<std::string> writes;  ///< keys opened for writing, and removed
    std::vector<std::string> conditional; ///< "read KEY" and "write KEY": read_tagged, write_conditional
    std::uint64_t calls() const {
        return reads.size() + stats.size() + lists.size() + writes.size() + conditional.size();
    }
};

} // namespace mirror::test
