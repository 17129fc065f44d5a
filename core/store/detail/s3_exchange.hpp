#pragma once
// Pieces the S3 store and its multipart writer share: sending a signed request and
// judging the answer, and collecting a small answer body.

#include "core/http/client.hpp"
#include "core/store/store.hpp"

#include <string>

namespace mirror::store {
class s3_store;
}

namespace mirror::store::detail {

/// Collects a small answer body (a listing page, an upload id); store_errc::too_large
/// past `limit` bytes.
class text_sink final : public io::byte_sink {
public:
    explicit text_sink(std::size_t limit) : limit_(limit) {}
    awaitable<result<void>> write(std::span<std::byte const> bytes) override;
    std::string text;

private:
    std::size_t limit_;
};

/// Sends a signed request through the store's client (with its retries) and judges the
/// answer: the head of a 2xx, else the error s3::classify makes of status and body.
awaitable<result<http::response_head>> send(s3_store& s3, http::request request, io::byte_sink* body);

} // namespace mirror::store::detail
