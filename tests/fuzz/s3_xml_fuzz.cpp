// libFuzzer target: S3's XML answers as the store reads them (core/s3/s3_error.hpp): the
// <Code> and <Message> of an error body classified with each status, a ListObjectsV2
// page's fields, an upload id, and the entities in all of them. The whole answer path,
// through the client and the store, is s3_store_fuzz. Besides the sanitizers: escaping
// and unescaping are inverse; xml_text reads exactly its element; a classification is a
// store_errc whose message names the request and stays bounded, whatever the body.

#include "core/s3/s3_error.hpp"
#include "core/io/errors.hpp"
#include "tests/fuzz/support/check.hpp"

using namespace mirror;
using mirror::fuzz::check;

namespace {

std::string escape(std::string_view text) {
    std::string out;
    for (char c : text) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&apos;"; break;
        default: out += c;
        }
    }
    return out;
}

void check_element(std::string_view xml, std::string_view tag) {
    auto text = s3::xml_text(xml, tag);
    std::string open = "<" + std::string(tag) + ">", close = "</" + std::string(tag) + ">";
    auto start = xml.find(open);
    if (start == std::string_view::npos) {
        check(!text, "an element read where there is none", tag);
        return;
    }
    auto end = xml.find(close, start + open.size());
    if (end == std::string_view::npos) {
        check(!text, "an element read without its end", tag);
        return;
    }
    check(text == s3::xml_unescape(xml.substr(start + open.size(), end - start - open.size())),
          "an element read other than its first occurrence", tag);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(unsigned char const* data, std::size_t size) {
    auto xml = mirror::fuzz::as_text(data, size);
    check(s3::xml_unescape(escape(xml)) == xml, "unescaping escaped text gives other text", xml);
    if (xml.find('&') == std::string_view::npos)
        check(s3::xml_unescape(xml) == xml, "text without entities changed by unescaping", xml);
    for (std::string_view tag : {"Code", "Message", "Key", "Size", "IsTruncated", "NextContinuationToken", "UploadId"})
        check_element(xml, tag);
    std::string const what = "s3://bucket/prefix/versions/x/version.json";
    for (unsigned status : {200u, 301u, 400u, 403u, 404u, 409u, 412u, 429u, 500u, 503u}) {
        auto e = s3::classify(status, xml, what);
        check(e.code.category() == io::store_category(), "a classification that is not a store_errc");
        check(e.message.starts_with(what + ": HTTP " + std::to_string(status)),
              "a classification that does not name the request and status", e.message);
        check(e.message.size() <= what.size() + 400, "a classification message that grows with the body");
    }
    return 0;
}
