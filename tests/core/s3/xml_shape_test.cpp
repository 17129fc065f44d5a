#include "core/s3/xml_shape.hpp"
#include <doctest/doctest.h>

#include <string>

using mirror::s3::xml_shape_problem;

TEST_CASE("a well-formed S3 answer passes, with its declaration, namespace, comments and empty elements") {
    CHECK(!xml_shape_problem("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                             "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                             "<Name>b</Name><Prefix/><!-- a > comment -->"
                             "<Contents><Key>a&lt;b</Key><Size>3</Size><ETag>\"x\"</ETag></Contents>"
                             "<IsTruncated>false</IsTruncated></ListBucketResult>\n",
                             "ListBucketResult"));
    CHECK(!xml_shape_problem("<ListBucketResult a='>'/>", "ListBucketResult"));
}

TEST_CASE("a malformed answer is refused, and says why") {
    auto problem = [](std::string const& xml) { return xml_shape_problem(xml, "ListBucketResult").value_or(""); };
    CHECK(problem("") == "no <ListBucketResult> element");
    CHECK(problem("<ListBucketResult><Contents><Key>a</Key>").find("<Contents> is never closed") == 0);
    CHECK(problem("<ListBucketResult></Contents></ListBucketResult>").find("matches no open element") !=
          std::string::npos);
    CHECK(problem("<Error><Code>x</Code></Error>").find("the root element is <Error>") == 0);
    CHECK(problem("<ListBucketResult></ListBucketResult><ListBucketResult/>") == "a second root element");
    CHECK(problem("<ListBucketResult></ListBucketResult>trailing") == "text after the root element");
    CHECK(problem("<!DOCTYPE x [<!ENTITY a \"b\">]><ListBucketResult/>").find("DOCTYPE") != std::string::npos);
    CHECK(problem("<ListBucketResult><Key").find("never closes") != std::string::npos);
    CHECK(problem("<ListBucketResult><!-- open").find("comment") != std::string::npos);
    std::string deep = "<ListBucketResult>";
    for (int i = 0; i < 10'000; ++i)
        deep += "<a>";
    CHECK(problem(deep).find("nested deeper than 32") != std::string::npos);
}
