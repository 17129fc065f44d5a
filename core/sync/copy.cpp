#include "core/sync/copy.hpp"

#include "core/io/errors.hpp"
#include "core/sync/errors.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>

namespace mirror::sync {

using namespace boost::asio::experimental::awaitable_operators;

static std::string short_hex(verify::sha256_digest const& d) {
    return verify::to_hex(d).substr(0, 12) + "…";
}

static error size_error(std::string const& key, std::uint64_t actual, std::uint64_t expected, std::string const& by,
                        bool at_least) {
    return make_error(sync_errc::size_mismatch, key + ": size is " + (at_least ? "more than " : "") +
                                                    std::to_string(actual) + " bytes, " + by + " says " +
                                                    std::to_string(expected));
}

static result<void> check_digest(verify::sha256_digest const& actual, expectation const& expect,
                                 std::string const& key) {
    if (expect.sha256 && actual != *expect.sha256)
        return make_error(sync_errc::sha256_mismatch, key + ": sha256 is " + short_hex(actual) + ", " +
                                                          expect.pinned_by + " says " + short_hex(*expect.sha256));
    return {};
}

result<void> check_bytes(std::string_view bytes, expectation const& expect, std::string const& key) {
    if (expect.bytes && bytes.size() != *expect.bytes)
        return size_error(key, bytes.size(), *expect.bytes, expect.pinned_by, false);
    if (expect.sha256)
        return check_digest(verify::sha256_of(bytes), expect, key);
    return {};
}

error as_content_error(error e) {
    if (e.code == io::store_errc::not_found)
        e.code = make_error_code(sync_errc::missing_file);
    else if (e.code == io::store_errc::not_a_file)
        e.code = make_error_code(sync_errc::not_a_regular_file);
    return e;
}

error origin_read_error(error e) {
    return with_context(as_content_error(std::move(e)), "origin");
}

// Chunks at least this large are hashed on the pool (see copy_object).
static constexpr std::size_t offload_bytes = 256 * 1024;

namespace {
/// Hashes and counts what streams through, forwards it to a writer when there is one,
/// and refuses bytes past the expected size so a hostile source cannot stream forever.
class checking_sink final : public io::byte_sink {
public:
    checking_sink(expectation const& expect, std::string const& key, store::object_writer* writer,
                  io::blocking_pool* pool)
        : expect_(expect), key_(key), writer_(writer), pool_(pool) {}

    awaitable<result<void>> write(std::span<std::byte const> bytes) override {
        count_ += bytes.size();
        if (expect_.bytes && count_ > *expect_.bytes)
            co_return size_error(key_, *expect_.bytes, *expect_.bytes, expect_.pinned_by, true);
        std::function<void()> hash = [&] { hasher_.update(bytes); };
        bool offload = pool_ != nullptr && bytes.size() >= offload_bytes;
        result<void> written;
        if (!offload) {
            // Small chunks are hashed here: a trip to the pool costs more than they do.
            hash();
            if (writer_ == nullptr)
                co_return result<void>();
            written = co_await writer_->write(bytes);
        } else if (writer_ == nullptr) {
            co_await pool_->run(hash);
            co_return result<void>();
        } else {
            // Hash and write the same chunk at once: both only read it.
            auto hashing = pool_->run(hash);
            auto writing = writer_->write(bytes);
            written = co_await (std::move(hashing) && std::move(writing));
        }
        if (!written) {
            writer_failed_ = true;
            co_return with_context(written.error(), "mirror");
        }
        co_return written;
    }

    bool writer_failed() const { return writer_failed_; }

    /// Reads `key` from `from` through this sink, then checks size and digest.
    awaitable<result<copy_outcome>> drain(store::store& from, bool name_origin) {
        auto read = co_await from.read(key_, *this);
        if (!read) {
            // A check of ours or the writer stopped the read: keep that error as it is.
            if (read.error().code.category() == sync_category() || writer_failed_)
                co_return read.error();
            co_return name_origin ? origin_read_error(read.error()) : as_content_error(read.error());
        }
        copy_outcome outcome{count_, hasher_.finish()};
        if (expect_.bytes && outcome.bytes != *expect_.bytes)
            co_return size_error(key_, outcome.bytes, *expect_.bytes, expect_.pinned_by, false);
        if (auto checked = check_digest(outcome.sha256, expect_, key_); !checked)
            co_return checked.error();
        co_return outcome;
    }

private:
    expectation const& expect_;
    std::string const& key_;
    store::object_writer* writer_;
    io::blocking_pool* pool_;
    verify::sha256_hasher hasher_;
    std::uint64_t count_ = 0;
    bool writer_failed_ = false;
};
} // namespace

awaitable<result<copy_outcome>> hash_object(store::store& from, std::string key, expectation expect,
                                            io::blocking_pool* pool) {
    checking_sink sink(expect, key, nullptr, pool);
    co_return co_await sink.drain(from, false);
}

awaitable<result<copy_outcome>> copy_object(store::store& from, store::store& to, std::string key,
                                            expectation expect, store::write_mode mode, bool& mirror_failed,
                                            sync_observer* observer, io::blocking_pool* pool) {
    mirror_failed = false;
    if (observer)
        observer->copying(key, expect.bytes.value_or(0));
    auto writer = co_await to.open_writer(key, mode);
    if (!writer) {
        mirror_failed = true;
        co_return with_context(writer.error(), "mirror");
    }
    checking_sink sink(expect, key, writer->get(), pool);
    auto outcome = co_await sink.drain(from, true);
    if (!outcome) {
        mirror_failed = sink.writer_failed();
        co_return outcome.error();
    }
    if (auto committed = co_await (*writer)->commit(); !committed) {
        mirror_failed = true;
        co_return with_context(committed.error(), "mirror");
    }
    if (observer)
        observer->copied(key, outcome->bytes);
    co_return outcome;
}

} // namespace mirror::sync
