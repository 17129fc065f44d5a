#include "core/store/detail/s3_exchange.hpp"

#include "core/s3/s3_error.hpp"
#include "core/io/errors.hpp"
#include "core/store/s3_store.hpp"

namespace mirror::store::detail {

awaitable<result<void>> text_sink::write(std::span<std::byte const> bytes) {
    if (text.size() + bytes.size() > limit_)
        co_return make_error(io::store_errc::too_large, "an S3 answer larger than " + std::to_string(limit_) + " bytes");
    text.append(reinterpret_cast<char const*>(bytes.data()), bytes.size());
    co_return result<void>();
}

awaitable<result<http::response_head>> send(s3_store& s3, http::request request, io::byte_sink* body) {
    std::string what = request.method + " " + request.where.text();
    auto answer = co_await s3.client().fetch(std::move(request), body);
    if (!answer)
        co_return answer.error();
    if (answer->status < 200 || answer->status >= 300)
        co_return s3::classify(answer->status, answer->error_body, what);
    co_return answer;
}

} // namespace mirror::store::detail
