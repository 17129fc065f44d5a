#pragma once
// A store in memory, for unit tests of what drives stores (the daemon's jobs and leases):
// every capability, conditional writes honoured as S3 honours them, no I/O and no time.
// Several stores may share one bucket of objects, each rooted at its own prefix, as S3
// stores share a bucket; the conformance suite holds it to the same contracts as the
// real backends.

#include "core/store/store.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace mirror::test {

/// The objects of a bucket, by full key, with the tag of their current bytes.
struct memory_bucket {
    struct object {
        std::string bytes;
        std::string tag;
    };
    std::map<std::string, object> objects;
    std::uint64_t next_tag = 1;
    /// False makes the bucket ignore the conditions of writes (as s3rver 3.7.1 does):
    /// for tests of what happens on a store that claims conditional writes but lies.
    bool honours_conditions = true;
    /// True makes every call fail as a server that cannot be reached (transient).
    bool unreachable = false;
    /// How many times each key was written (the cost of coordination, counted at the store).
    std::map<std::string, std::uint64_t> writes;

    void put(std::string const& key, std::string bytes);
};

class memory_store final : public mirror::store::store {
public:
    /// A store over `bucket` at `prefix` ("" or ending in '/'), named `name` in messages.
    memory_store(std::shared_ptr<memory_bucket> bucket, std::string prefix = "", std::string name = "memory");

    mirror::store::store_caps caps() const override { return {true, true, true, true}; }
    std::string describe() const override { return "mem://" + name_ + "/" + prefix_; }
    std::string server() const override { return "mem://" + name_; }
    awaitable<result<mirror::store::object_info>> stat(std::string key) override;
    awaitable<result<void>> read(std::string key, io::byte_sink& out) override;
    awaitable<result<void>> list(std::string prefix, std::function<result<void>(mirror::store::list_entry)> each) override;
    awaitable<result<std::unique_ptr<mirror::store::object_writer>>> open_writer(std::string key,
                                                                         mirror::store::write_mode mode) override;
    awaitable<result<void>> remove(std::string key) override;
    awaitable<result<mirror::store::tagged_object>> read_tagged(std::string key, std::size_t limit) override;
    awaitable<result<std::string>> write_conditional(std::string key, std::string bytes,
                                                     std::optional<std::string> if_tag) override;

    memory_bucket& bucket() { return *bucket_; }

private:
    std::shared_ptr<memory_bucket> bucket_;
    std::string prefix_;
    std::string name_;
};

} // namespace mirror::test
