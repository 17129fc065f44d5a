#include "core/s3/s3_error.hpp"
#include <doctest/doctest.h>

#include "core/io/errors.hpp"

using namespace mirror;
using namespace mirror::s3;
using io::store_errc;

TEST_CASE("S3 answers are classified once, from the status and the XML Code") {
    auto body = [](char const* code) {
        return std::string("<?xml version=\"1.0\"?><Error><Code>") + code +
               "</Code><Message>It &amp; went &lt;wrong&gt;</Message></Error>";
    };
    struct expected {
        unsigned status;
        char const* code;
        store_errc kind;
    };
    for (auto const& e : {expected{404, "NoSuchKey", store_errc::not_found},
                          expected{404, "NoSuchBucket", store_errc::not_found},
                          expected{403, "AccessDenied", store_errc::access_denied},
                          expected{403, "SignatureDoesNotMatch", store_errc::access_denied},
                          expected{403, "InvalidAccessKeyId", store_errc::access_denied},
                          expected{412, "PreconditionFailed", store_errc::already_exists},
                          expected{503, "SlowDown", store_errc::transient},
                          expected{500, "InternalError", store_errc::transient},
                          expected{400, "RequestTimeout", store_errc::transient},
                          expected{400, "XAmzContentSHA256Mismatch", store_errc::transient},
                          expected{400, "BadDigest", store_errc::transient},
                          expected{400, "InvalidArgument", store_errc::rejected},
                          expected{501, "NotImplemented", store_errc::unsupported},
                          expected{403, "RequestTimeTooSkewed", store_errc::rejected}}) {
        CAPTURE(e.code);
        auto classified = classify(e.status, body(e.code), "GET s3://b/k");
        CHECK(classified.code == e.kind);
        CHECK(classified.message == "GET s3://b/k: HTTP " + std::to_string(e.status) + " " + e.code +
                                        " (It & went <wrong>)");
    }
    // HEAD answers have no body: the status decides.
    CHECK(classify(404, "", "HEAD k").code == store_errc::not_found);
    CHECK(classify(403, "", "HEAD k").code == store_errc::access_denied);
    CHECK(classify(412, "", "PUT k").code == store_errc::already_exists);
    CHECK(classify(502, "", "GET k").code == store_errc::transient);
    CHECK(classify(501, "", "GET k").code == store_errc::unsupported);
    CHECK(classify(400, "", "GET k").code == store_errc::rejected);
}

TEST_CASE("XML text and entities") {
    CHECK(xml_text("<a><Key>x&amp;y&#47;z&#x41;</Key></a>", "Key") == "x&y/zA");
    CHECK(!xml_text("<a><Key>unterminated", "Key"));
    CHECK(xml_unescape("&eacute; &#233; &unknown;") == "&eacute; \xC3\xA9 &unknown;");
}
