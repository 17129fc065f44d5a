#include "core/store/s3_writer.hpp"

#include "core/s3/s3_error.hpp"
#include "core/store/detail/s3_exchange.hpp"
#include "core/io/errors.hpp"
#include "core/store/s3_parts.hpp"
#include "core/store/s3_store.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <exception>
#include <optional>
#include <vector>

namespace mirror::store {

namespace {

/// One multipart upload, shared with its parts in flight so that it outlives a writer
/// destroyed mid-upload.
struct upload_state {
    upload_state(s3_store& store, std::string object_key, net::any_io_executor executor)
        : s3(store), key(std::move(object_key)), wake(std::move(executor)) {}
    s3_store& s3;
    std::string key;
    std::string id;                  ///< the UploadId
    std::vector<std::string> etags;  ///< by part number - 1; empty until that part is stored
    std::size_t in_flight = 0;       ///< parts sent in the background, not yet answered
    std::optional<error> failure;    ///< the first part that failed
    net::steady_timer wake;          ///< cancelled whenever a background part ends
};

/// Uploads part `number` (from 1) and records its ETag.
awaitable<result<void>> put_part(std::shared_ptr<upload_state> up, std::size_t number, std::string part) {
    // The part's bytes are gone once the request is made; its grant, held by the caller,
    // covers the request until it is answered.
    std::string text = std::to_string(number);
    auto request = up->s3.signed_request("PUT", up->key, false, {{"partNumber", text}, {"uploadId", up->id}}, {},
                                         std::move(part));
    auto put = co_await detail::send(up->s3, std::move(request), nullptr);
    if (!put)
        co_return put.error();
    auto etag = put->header("etag");
    if (!etag)
        co_return make_error(io::store_errc::rejected, up->key + ": part " + text + " came back without an ETag");
    up->etags[number - 1] = *etag;
    co_return result<void>();
}

/// A part sent in the background: records its failure, frees its slot and its memory,
/// wakes commit().
awaitable<void> background_part(std::shared_ptr<upload_state> up, std::size_t number, std::string part,
                                io::memory_budget::grant memory) {
    auto sent = co_await put_part(up, number, std::move(part));
    memory.reset();
    if (!sent && !up->failure)
        up->failure = sent.error();
    --up->in_flight;
    up->s3.return_part_slot();
    up->wake.cancel();
}

awaitable<void> abort_upload(std::shared_ptr<upload_state> up) {
    // Wait for the parts in flight: one that lands after the abort would be an orphan.
    while (up->in_flight > 0) {
        up->wake.expires_at(net::steady_timer::time_point::max());
        co_await up->wake.async_wait(use_op);
    }
    auto request = up->s3.signed_request("DELETE", up->key, false, {{"uploadId", up->id}}, {}, {});
    auto aborted = co_await detail::send(up->s3, std::move(request), nullptr);
    (void)aborted; // best effort: a bucket lifecycle rule should clean what this misses
}

/// Ends the process on an exception escaping a background coroutine: that is a bug.
void rethrow_bug(std::exception_ptr bug) {
    if (bug)
        std::rethrow_exception(bug);
}

class s3_writer final : public object_writer {
public:
    s3_writer(s3_store& s3, std::string key, write_mode mode) : s3_(s3), key_(std::move(key)), mode_(mode) {}

    ~s3_writer() override {
        if (upload_ && !committed_) // destructors cannot wait: the abort runs on its own
            net::co_spawn(upload_->wake.get_executor(), abort_upload(upload_), rethrow_bug);
    }

    awaitable<result<void>> write(std::span<std::byte const> bytes) override {
        auto const& settings = s3_.settings();
        while (!bytes.empty()) {
            // What the buffer holds before a part must go: a whole small object, or a part.
            std::size_t const part = part_bytes_at(settings.part_bytes, upload_ ? upload_->etags.size() + 1 : 1);
            std::size_t const limit = upload_ ? part : std::max(settings.multipart_threshold, part);
            if (buffer_.size() >= limit) {
                // Full, and more comes: the whole buffer goes up as the next part, with its
                // grant (the last part is always kept for commit(), so it is never empty).
                // The first part holds the multipart threshold's bytes, the others a part's:
                // S3 takes parts of different sizes, and cutting the buffer would send bytes
                // past their grant.
                auto sent = co_await send_buffer_as_part();
                if (!sent)
                    co_return sent;
                continue;
            }
            if (!memory_ && buffer_.size() + bytes.size() > unbudgeted_bytes) {
                // A buffer that grows past a small object's size holds memory for a while:
                // it waits for the process's budget, then takes its full size at once (so
                // that two half-filled buffers never wait for each other), but never more
                // than half the budget: versions gathered ahead may hold the other half
                // (sync_pass.cpp, grant_memory).
                std::uint64_t const ask =
                    settings.memory ? std::min<std::uint64_t>(limit, settings.memory->capacity() / 2) : limit;
                auto granted = co_await draw(settings.memory, ask);
                memory_ = std::move(granted);
                buffer_.reserve(limit);
            }
            std::size_t const take = std::min(bytes.size(), limit - buffer_.size());
            buffer_.append(reinterpret_cast<char const*>(bytes.data()), take);
            bytes = bytes.subspan(take);
        }
        co_return result<void>();
    }

    awaitable<result<void>> commit() override {
        std::vector<std::pair<std::string, std::string>> headers;
        if (mode_ == write_mode::create_only)
            headers.emplace_back("If-None-Match", "*");
        if (!upload_) {
            auto request = s3_.signed_request("PUT", key_, false, {}, std::move(headers), std::move(buffer_));
            auto put = co_await detail::send(s3_, std::move(request), nullptr);
            if (!put)
                co_return put.error();
            committed_ = true;
            co_return result<void>();
        }
        if (!buffer_.empty()) {
            std::string last = std::move(buffer_);
            auto memory = std::move(memory_);
            auto sent = co_await send_part(std::move(last), std::move(memory));
            if (!sent)
                co_return sent;
        }
        while (upload_->in_flight > 0) {
            upload_->wake.expires_at(net::steady_timer::time_point::max());
            co_await upload_->wake.async_wait(use_op);
        }
        if (upload_->failure)
            co_return *upload_->failure;
        // Ceph RGW 16 ignores If-None-Match on CompleteMultipartUpload (it honours it on PUT):
        // look first, so that a taken key is refused there too, except in a race with
        // another writer of the same key between this HEAD and the completion.
        if (mode_ == write_mode::create_only) {
            auto existing = co_await s3_.stat(key_);
            if (existing)
                co_return make_error(io::store_errc::already_exists, s3_.describe() + key_ + ": already there");
            if (existing.error().code != io::store_errc::not_found)
                co_return existing.error();
        }
        std::string xml = "<CompleteMultipartUpload>";
        for (std::size_t i = 0; i < upload_->etags.size(); ++i)
            xml += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" + upload_->etags[i] +
                   "</ETag></Part>";
        xml += "</CompleteMultipartUpload>";
        auto request = s3_.signed_request("POST", key_, false, {{"uploadId", upload_->id}}, std::move(headers),
                                          std::move(xml));
        detail::text_sink answer(64 * 1024);
        auto done = co_await detail::send(s3_, std::move(request), &answer);
        if (!done)
            co_return done.error();
        // CompleteMultipartUpload may fail after a 200, with an <Error> in the body.
        if (answer.text.find("<Error>") != std::string::npos)
            co_return s3::classify(500, answer.text, "completing the upload of " + key_);
        committed_ = true;
        co_return result<void>();
    }

private:
    awaitable<result<void>> start_upload() {
        auto request = s3_.signed_request("POST", key_, false, {{"uploads", ""}}, {}, {});
        detail::text_sink answer(64 * 1024);
        auto created = co_await detail::send(s3_, std::move(request), &answer);
        if (!created)
            co_return created.error();
        auto id = s3::xml_text(answer.text, "UploadId");
        if (!id || id->empty())
            co_return make_error(io::store_errc::rejected, key_ + ": the store gave no UploadId");
        upload_ = std::make_shared<upload_state>(s3_, key_, co_await net::this_coro::executor);
        upload_->id = *id;
        co_return result<void>();
    }

    /// Sends the whole buffer as the next part, with the grant that covers it.
    awaitable<result<void>> send_buffer_as_part() {
        std::string part = std::move(buffer_);
        buffer_.clear(); // a moved-from string is valid but unspecified
        auto memory = std::move(memory_);
        auto sent = co_await send_part(std::move(part), std::move(memory));
        co_return sent;
    }

    /// Sends the next part: in the background when the store has a free slot, else here.
    /// `memory` is the grant of its bytes, given back once it is answered.
    awaitable<result<void>> send_part(std::string part, io::memory_budget::grant memory) {
        if (!upload_) {
            auto started = co_await start_upload();
            if (!started)
                co_return started;
        }
        if (upload_->failure)
            co_return *upload_->failure;
        upload_->etags.emplace_back();
        std::size_t number = upload_->etags.size();
        if (!s3_.take_part_slot())
            co_return co_await put_part(upload_, number, std::move(part));
        ++upload_->in_flight;
        net::co_spawn(upload_->wake.get_executor(),
                      background_part(upload_, number, std::move(part), std::move(memory)), rethrow_bug);
        co_return result<void>();
    }

    s3_store& s3_;
    std::string key_;
    write_mode mode_;
    /// Objects up to this size are buffered without drawing on the memory budget: at any
    /// concurrency they are a few MiB, and thousands of small files should not queue.
    static constexpr std::size_t unbudgeted_bytes = 256 * 1024;
    std::string buffer_;
    io::memory_budget::grant memory_; ///< covers buffer_ once it grew past unbudgeted_bytes
    std::shared_ptr<upload_state> upload_;
    bool committed_ = false;
};

} // namespace

std::unique_ptr<object_writer> make_s3_writer(s3_store& s3, std::string key, write_mode mode) {
    return std::make_unique<s3_writer>(s3, std::move(key), mode);
}

} // namespace mirror::store
