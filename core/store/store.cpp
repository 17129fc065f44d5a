#include "core/store/store.hpp"

#include "core/io/errors.hpp"

#include <algorithm>

namespace mirror::store {

store::~store() = default;

awaitable<result<void>> store::list(std::string prefix, std::function<result<void>(list_entry)>) {
    co_return make_error(io::store_errc::unsupported, describe() + ": cannot list " + prefix);
}

awaitable<result<std::unique_ptr<object_writer>>> store::open_writer(std::string key, write_mode) {
    co_return make_error(io::store_errc::unsupported, describe() + ": read-only, cannot write " + key);
}

awaitable<result<void>> store::remove(std::string key) {
    co_return make_error(io::store_errc::unsupported, describe() + ": read-only, cannot delete " + key);
}

awaitable<result<std::size_t>> store::discard_incomplete_writes() { co_return std::size_t{0}; }

awaitable<result<tagged_object>> store::read_tagged(std::string key, std::size_t) {
    co_return make_error(io::store_errc::unsupported, describe() + ": no conditional writes, cannot read " + key + " with its tag");
}

awaitable<result<std::string>> store::write_conditional(std::string key, std::string, std::optional<std::string>) {
    co_return make_error(io::store_errc::unsupported, describe() + ": no conditional writes, cannot write " + key);
}

namespace {
class string_sink final : public io::byte_sink {
public:
    string_sink(std::string& out, std::size_t limit, std::string name)
        : out_(out), limit_(limit), name_(std::move(name)) {}
    awaitable<result<void>> write(std::span<std::byte const> bytes) override {
        if (out_.size() + bytes.size() > limit_)
            co_return make_error(io::store_errc::too_large,
                                 name_ + ": larger than " + std::to_string(limit_) + " bytes, the most accepted");
        // A quarter more at a time, never past the limit: doubling would hold twice a
        // large file's size for its text (a 16 MiB refs.json took 32 MiB).
        if (auto needed = out_.size() + bytes.size(); needed > out_.capacity())
            out_.reserve(std::min(limit_, std::max(needed, out_.capacity() + out_.capacity() / 4)));
        out_.append(reinterpret_cast<char const*>(bytes.data()), bytes.size());
        co_return result<void>();
    }

private:
    std::string& out_;
    std::size_t limit_;
    std::string name_;
};
} // namespace

awaitable<result<std::string>> read_all(store& from, std::string key, std::size_t limit) {
    std::string bytes;
    string_sink sink(bytes, limit, key);
    auto done = co_await from.read(key, sink);
    if (!done)
        co_return done.error();
    co_return bytes;
}

awaitable<result<std::optional<std::string>>> read_if_present(store& from, std::string key, std::size_t limit) {
    auto bytes = co_await read_all(from, std::move(key), limit);
    if (bytes)
        co_return std::optional<std::string>(std::move(*bytes));
    if (bytes.error().code == io::store_errc::not_found)
        co_return std::optional<std::string>();
    co_return bytes.error();
}

awaitable<result<void>> write_all(store& to, std::string key, std::string bytes, write_mode mode) {
    auto writer = co_await to.open_writer(key, mode);
    if (!writer)
        co_return writer.error();
    auto written = co_await (*writer)->write(std::as_bytes(std::span(bytes.data(), bytes.size())));
    if (!written)
        co_return written.error();
    co_return co_await (*writer)->commit();
}

std::optional<std::string> key_problem(std::string_view key) {
    if (key.empty())
        return "an empty key";
    std::size_t start = 0;
    while (true) {
        std::size_t slash = key.find('/', start);
        std::string_view segment = key.substr(start, slash == std::string_view::npos ? slash : slash - start);
        if (segment.empty())
            return "an empty segment in key '" + std::string(key.substr(0, 200)) + "'";
        if (segment == "." || segment == "..")
            return "a '" + std::string(segment) + "' segment in key '" + std::string(key.substr(0, 200)) + "'";
        if (segment.find('\0') != std::string_view::npos)
            return "a NUL in key '" + std::string(key.substr(0, 200)) + "'";
        if (slash == std::string_view::npos)
            return std::nullopt;
        start = slash + 1;
    }
}

std::optional<std::string> prefix_problem(std::string_view prefix) {
    if (prefix.empty())
        return std::nullopt;
    if (!prefix.ends_with('/'))
        return "list prefix '" + std::string(prefix.substr(0, 200)) + "' does not end in '/'";
    return key_problem(prefix.substr(0, prefix.size() - 1));
}

} // namespace mirror::store
