#include "tests/support/memory_store.hpp"

#include "core/io/errors.hpp"

#include <algorithm>
#include <vector>

namespace mirror::test {

using io::store_errc;

void memory_bucket::put(std::string const& key, std::string bytes) {
    ++writes[key];
    objects[key] = object{std::move(bytes), "t" + std::to_string(next_tag++)};
}

namespace {

/// Refuses what every backend refuses, before touching the bucket, and everything while
/// the bucket is unreachable.
std::optional<error> refuse(memory_bucket const& bucket, std::string const& key) {
    if (bucket.unreachable)
        return make_error(store_errc::transient, key + ": the store cannot be reached");
    if (auto problem = mirror::store::key_problem(key))
        return make_error(store_errc::rejected, *problem);
    return std::nullopt;
}

class memory_writer final : public mirror::store::object_writer {
public:
    memory_writer(std::shared_ptr<memory_bucket> bucket, std::string key, mirror::store::write_mode mode)
        : bucket_(std::move(bucket)), key_(std::move(key)), mode_(mode) {}

    awaitable<result<void>> write(std::span<std::byte const> bytes) override {
        bytes_.append(reinterpret_cast<char const*>(bytes.data()), bytes.size());
        co_return result<void>{};
    }
    awaitable<result<void>> commit() override {
        if (bucket_->unreachable)
            co_return make_error(store_errc::transient, key_ + ": the store cannot be reached");
        if (mode_ == mirror::store::write_mode::create_only && bucket_->honours_conditions && bucket_->objects.contains(key_))
            co_return make_error(store_errc::already_exists, key_ + ": already exists");
        bucket_->put(key_, std::move(bytes_));
        co_return result<void>{};
    }

private:
    std::shared_ptr<memory_bucket> bucket_;
    std::string key_;
    mirror::store::write_mode mode_;
    std::string bytes_;
};

} // namespace

memory_store::memory_store(std::shared_ptr<memory_bucket> bucket, std::string prefix, std::string name)
    : bucket_(std::move(bucket)), prefix_(std::move(prefix)), name_(std::move(name)) {}

awaitable<result<mirror::store::object_info>> memory_store::stat(std::string key) {
    if (auto refused = refuse(*bucket_, key))
        co_return *refused;
    auto found = bucket_->objects.find(prefix_ + key);
    if (found == bucket_->objects.end())
        co_return make_error(store_errc::not_found, key + ": not found");
    co_return mirror::store::object_info{found->second.bytes.size()};
}

awaitable<result<void>> memory_store::read(std::string key, io::byte_sink& out) {
    if (auto refused = refuse(*bucket_, key))
        co_return *refused;
    auto found = bucket_->objects.find(prefix_ + key);
    if (found == bucket_->objects.end())
        co_return make_error(store_errc::not_found, key + ": not found");
    std::string const bytes = found->second.bytes; // the sink may write to the bucket meanwhile
    // In chunks, as every backend streams: a sink's error stops the read between two.
    constexpr std::size_t chunk = 64 * 1024;
    for (std::size_t at = 0; at < bytes.size(); at += chunk) {
        auto const part = std::span<char const>(bytes.data() + at, std::min(chunk, bytes.size() - at));
        if (auto written = co_await out.write(std::as_bytes(part)); !written)
            co_return written;
    }
    co_return result<void>{};
}

awaitable<result<void>> memory_store::list(std::string prefix, std::function<result<void>(mirror::store::list_entry)> each) {
    if (bucket_->unreachable)
        co_return make_error(store_errc::transient, prefix + ": the store cannot be reached");
    if (auto problem = mirror::store::prefix_problem(prefix))
        co_return make_error(store_errc::rejected, *problem);
    std::string const from = prefix_ + prefix;
    std::vector<mirror::store::list_entry> found; // `each` may write to the bucket
    for (auto it = bucket_->objects.lower_bound(from); it != bucket_->objects.end() && it->first.starts_with(from); ++it)
        found.push_back({it->first.substr(prefix_.size()), it->second.bytes.size()});
    for (auto& entry : found)
        if (auto done = each(std::move(entry)); !done)
            co_return done;
    co_return result<void>{};
}

awaitable<result<std::unique_ptr<mirror::store::object_writer>>> memory_store::open_writer(std::string key,
                                                                                   mirror::store::write_mode mode) {
    if (auto refused = refuse(*bucket_, key))
        co_return *refused;
    co_return std::unique_ptr<mirror::store::object_writer>(std::make_unique<memory_writer>(bucket_, prefix_ + key, mode));
}

awaitable<result<void>> memory_store::remove(std::string key) {
    if (auto refused = refuse(*bucket_, key))
        co_return *refused;
    if (bucket_->objects.erase(prefix_ + key) == 0)
        co_return make_error(store_errc::not_found, key + ": not found");
    co_return result<void>{};
}

awaitable<result<mirror::store::tagged_object>> memory_store::read_tagged(std::string key, std::size_t limit) {
    if (auto refused = refuse(*bucket_, key))
        co_return *refused;
    auto found = bucket_->objects.find(prefix_ + key);
    if (found == bucket_->objects.end())
        co_return make_error(store_errc::not_found, key + ": not found");
    if (found->second.bytes.size() > limit)
        co_return make_error(store_errc::too_large, key + ": larger than " + std::to_string(limit) + " bytes");
    co_return mirror::store::tagged_object{found->second.bytes, found->second.tag};
}

awaitable<result<std::string>> memory_store::write_conditional(std::string key, std::string bytes,
                                                               std::optional<std::string> if_tag) {
    if (auto refused = refuse(*bucket_, key))
        co_return *refused;
    auto& objects = bucket_->objects;
    auto found = objects.find(prefix_ + key);
    bool const holds = if_tag ? found != objects.end() && found->second.tag == *if_tag : found == objects.end();
    if (!holds && bucket_->honours_conditions)
        co_return make_error(store_errc::conflict, key + ": changed by another writer");
    bucket_->put(prefix_ + key, std::move(bytes));
    co_return objects[prefix_ + key].tag;
}

} // namespace mirror::test
