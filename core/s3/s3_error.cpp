#include "core/s3/s3_error.hpp"

#include "core/io/errors.hpp"

#include <charconv>

namespace mirror::s3 {

std::string xml_unescape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '&') {
            out += text[i];
            continue;
        }
        auto end = text.find(';', i);
        if (end == std::string_view::npos) {
            out += text.substr(i);
            break;
        }
        auto entity = text.substr(i + 1, end - i - 1);
        if (entity == "amp")
            out += '&';
        else if (entity == "lt")
            out += '<';
        else if (entity == "gt")
            out += '>';
        else if (entity == "quot")
            out += '"';
        else if (entity == "apos")
            out += '\'';
        else if (entity.starts_with('#')) {
            bool hex = entity.size() > 1 && (entity[1] == 'x' || entity[1] == 'X');
            auto digits = entity.substr(hex ? 2 : 1);
            std::uint32_t code = 0;
            auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), code, hex ? 16 : 10);
            if (ec != std::errc() || p != digits.data() + digits.size() || code > 0x10FFFF) {
                out += text.substr(i, end - i + 1);
            } else if (code < 0x80) {
                out += static_cast<char>(code);
            } else if (code < 0x800) {
                out += static_cast<char>(0xC0 | (code >> 6));
                out += static_cast<char>(0x80 | (code & 0x3F));
            } else if (code < 0x10000) {
                out += static_cast<char>(0xE0 | (code >> 12));
                out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
                out += static_cast<char>(0x80 | (code & 0x3F));
            } else {
                out += static_cast<char>(0xF0 | (code >> 18));
                out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
                out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
                out += static_cast<char>(0x80 | (code & 0x3F));
            }
        } else {
            out += text.substr(i, end - i + 1); // unknown: kept as it is
        }
        i = end;
    }
    return out;
}

std::optional<std::string> xml_text(std::string_view xml, std::string_view tag) {
    std::string open = "<" + std::string(tag) + ">", close = "</" + std::string(tag) + ">";
    auto start = xml.find(open);
    if (start == std::string_view::npos)
        return std::nullopt;
    start += open.size();
    auto end = xml.find(close, start);
    if (end == std::string_view::npos)
        return std::nullopt;
    return xml_unescape(xml.substr(start, end - start));
}

error classify(unsigned status, std::string_view body, std::string const& what) {
    using io::store_errc;
    std::string code = xml_text(body, "Code").value_or("");
    std::string message = what + ": HTTP " + std::to_string(status);
    if (!code.empty())
        message += " " + code.substr(0, 80);
    if (auto text = xml_text(body, "Message"))
        message += " (" + text->substr(0, 200) + ")";
    auto is = [&](std::initializer_list<std::string_view> codes) {
        for (auto c : codes)
            if (code == c)
                return true;
        return false;
    };
    io::store_errc kind = io::store_errc::rejected;
    if (is({"NoSuchKey", "NoSuchBucket", "NoSuchUpload"}) || (code.empty() && (status == 404 || status == 410)))
        kind = io::store_errc::not_found;
    else if (is({"AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken",
                 "AllAccessDisabled", "AccountProblem"}) ||
             (code.empty() && (status == 401 || status == 403)))
        kind = io::store_errc::access_denied;
    else if (is({"PreconditionFailed", "ConditionalRequestConflict"}) || (code.empty() && status == 412))
        kind = io::store_errc::already_exists;
    else if (is({"NotImplemented"}) || (code.empty() && status == 501))
        kind = io::store_errc::unsupported; // a feature this server lacks: no retry will change it
    // The server got other bytes than were hashed (XAmzContentSHA256Mismatch, BadDigest):
    // damaged in transit, and not stored; the bytes held are sound, so sending again is safe.
    else if (is({"SlowDown", "InternalError", "ServiceUnavailable", "RequestTimeout",
                 "OperationAborted", "Throttling", "ThrottlingException", "XAmzContentSHA256Mismatch",
                 "BadDigest"}) ||
             status == 429 || (status >= 500 && status < 600))
        kind = io::store_errc::transient;
    return make_error(kind, message);
}

} // namespace mirror::s3
