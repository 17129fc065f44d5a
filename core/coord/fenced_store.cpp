#include "core/coord/fenced_store.hpp"

#include "core/io/errors.hpp"

#include <span>

namespace mirror::coord {

namespace {

constexpr std::size_t most_ref_bytes = 64 * 1024 * 1024; // refs.json of the most refs a pass takes

/// Buffers a ref's bytes; its commit is one conditional write.
class ref_writer final : public st::object_writer {
public:
    ref_writer(fenced_store& to, std::string key, st::write_mode mode) : to_(to), key_(std::move(key)), mode_(mode) {}
    awaitable<result<void>> write(std::span<std::byte const> bytes) override {
        bytes_.append(reinterpret_cast<char const*>(bytes.data()), bytes.size());
        co_return result<void>();
    }
    awaitable<result<void>> commit() override { co_return co_await to_.write_ref(key_, std::move(bytes_), mode_); }

private:
    fenced_store& to_;
    std::string key_;
    st::write_mode mode_;
    std::string bytes_;
};

/// Another writer's object, committed only while the lease still covers it.
class checked_writer final : public st::object_writer {
public:
    checked_writer(fenced_store const& to, std::unique_ptr<st::object_writer> inner)
        : to_(to), inner_(std::move(inner)) {}
    awaitable<result<void>> write(std::span<std::byte const> bytes) override { co_return co_await inner_->write(bytes); }
    awaitable<result<void>> commit() override {
        if (auto why = to_.fenced())
            co_return *why;
        co_return co_await inner_->commit();
    }

private:
    fenced_store const& to_;
    std::unique_ptr<st::object_writer> inner_;
};

class span_sink_feed {
public:
    static awaitable<result<void>> feed(io::byte_sink& out, std::string const& bytes) {
        if (bytes.empty())
            co_return result<void>();
        co_return co_await out.write(std::as_bytes(std::span<char const>(bytes.data(), bytes.size())));
    }
};

} // namespace

fenced_store::fenced_store(std::unique_ptr<st::store> inner, lease const& held, milliseconds margin)
    : forwarding_store(std::move(inner)), lease_(held), margin_(margin) {}

fenced_store::fenced_store(st::store& inner, lease const& held, milliseconds margin)
    : forwarding_store(inner), lease_(held), margin_(margin) {}

fenced_store::~fenced_store() = default;

bool fenced_store::is_ref_key(std::string_view key) {
    return key == "refs.json" || key == "HEAD" || key.starts_with("refs/");
}

std::optional<error> fenced_store::fenced() const {
    if (lease_.covers(margin_))
        return std::nullopt;
    return make_error(io::store_errc::conflict,
                      describe() + ": not written: this daemon does not hold " + lease_.describe() + " with " +
                          std::to_string(margin_.count() / 1000) + "s of it left (another daemon may hold it now)");
}

awaitable<result<void>> fenced_store::read(std::string key, io::byte_sink& out) {
    if (!is_ref_key(key))
        co_return co_await inner().read(key, out);
    auto got = co_await inner().read_tagged(key, most_ref_bytes);
    if (!got) {
        if (got.error().code == io::store_errc::not_found)
            tags_[key] = std::nullopt;
        co_return got.error();
    }
    tags_[key] = got->tag;
    co_return co_await span_sink_feed::feed(out, got->bytes);
}

awaitable<result<std::unique_ptr<st::object_writer>>> fenced_store::open_writer(std::string key,
                                                                                   st::write_mode mode) {
    if (auto why = fenced())
        co_return *why;
    if (is_ref_key(key))
        co_return std::unique_ptr<st::object_writer>(std::make_unique<ref_writer>(*this, std::move(key), mode));
    auto opened = co_await inner().open_writer(std::move(key), mode);
    if (!opened)
        co_return opened.error();
    co_return std::unique_ptr<st::object_writer>(std::make_unique<checked_writer>(*this, std::move(*opened)));
}

awaitable<result<void>> fenced_store::write_ref(std::string key, std::string bytes, st::write_mode mode) {
    if (auto why = fenced())
        co_return *why;
    // Replace what this holder last saw there; a ref it never saw must still be absent.
    std::optional<std::string> if_tag;
    if (auto seen = tags_.find(key); seen != tags_.end() && mode == st::write_mode::replace)
        if_tag = seen->second;
    auto written = co_await inner().write_conditional(key, std::move(bytes), if_tag);
    if (!written) {
        tags_.erase(key); // unknown now: the next pass reads it again
        if (written.error().code == io::store_errc::conflict && mode == st::write_mode::create_only)
            co_return make_error(io::store_errc::already_exists, written.error().message);
        co_return written.error();
    }
    tags_[key] = std::move(*written);
    co_return result<void>();
}

awaitable<result<void>> fenced_store::remove(std::string key) {
    if (auto why = fenced())
        co_return *why;
    co_return co_await inner().remove(std::move(key));
}

awaitable<result<std::size_t>> fenced_store::discard_incomplete_writes() {
    if (auto why = fenced())
        co_return *why;
    co_return co_await inner().discard_incomplete_writes();
}

awaitable<result<std::string>> fenced_store::write_conditional(std::string key, std::string bytes,
                                                               std::optional<std::string> if_tag) {
    if (auto why = fenced())
        co_return *why;
    co_return co_await inner().write_conditional(std::move(key), std::move(bytes), std::move(if_tag));
}

} // namespace mirror::coord
