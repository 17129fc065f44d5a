#include "tests/support/http_fault.hpp"

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/status.hpp>

namespace mirror::test {

namespace http = boost::beast::http;

fault respond_with(unsigned status, header_list headers) { return {fault::action::none, status, std::move(headers)}; }
fault redirect_to(unsigned status, std::string location) {
    return respond_with(status, {{"Location", std::move(location)}});
}
fault close_before_headers() { return {fault::action::close_before_headers}; }
fault short_body() { return {fault::action::short_body}; }
fault long_body() { return {fault::action::long_body}; }
fault stall_before_headers(std::chrono::milliseconds how_long) {
    return {fault::action::stall_before_headers, 0, {}, how_long};
}
fault stall_mid_body(std::chrono::milliseconds how_long) { return {fault::action::stall_mid_body, 0, {}, how_long}; }
fault drip_body(std::chrono::milliseconds per_byte) { return {fault::action::drip_body, 0, {}, per_byte}; }
fault reset_mid_body() { return {fault::action::reset_mid_body}; }
fault padded_body() { return {fault::action::padded_body}; }
fault lose_answer() { return {fault::action::lose_answer}; }
fault head_then_body() { return {fault::action::head_then_body}; }
fault interim_first() { return {fault::action::interim_first}; }
fault corrupt_request_body() { return {fault::action::corrupt_request_body}; }

fault s3_error(unsigned status, std::string code, header_list headers) {
    headers.emplace_back("Content-Type", "application/xml");
    // The shape of S3's error documents (docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html).
    std::string body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>" + code +
                       "</Code><Message>injected by the test</Message><RequestId>0</RequestId></Error>";
    return {fault::action::none, status, std::move(headers), {}, std::move(body)};
}

std::string recorded_request::header(std::string_view name) const {
    for (auto const& [key, value] : headers)
        if (boost::beast::iequals(key, name))
            return value;
    return "";
}

std::string render_head(raw_response const& out, std::optional<std::uint64_t> declared) {
    auto reason = http::obsolete_reason(http::int_to_status(out.status));
    // Three digits whatever the status, so that a test can send one out of range ("002").
    std::string status = std::to_string(out.status);
    status.insert(0, status.size() < 3 ? 3 - status.size() : 0, '0');
    std::string head = "HTTP/1.1 " + status + " " + std::string(reason.data(), reason.size()) + "\r\n";
    if (declared)
        head += "Content-Length: " + std::to_string(*declared) + "\r\n";
    for (auto const& [name, value] : out.headers)
        head += name + ": " + value + "\r\n";
    if (!out.keep_alive)
        head += "Connection: close\r\n";
    return head + "\r\n";
}

} // namespace mirror::test
