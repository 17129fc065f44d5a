#include "core/store/s3_store.hpp"
#include <doctest/doctest.h>

#include "core/io/errors.hpp"

using namespace mirror;
using namespace mirror::store;

namespace {

s3_store_settings settings_for(std::optional<std::string> endpoint, bool path_style) {
    s3_store_settings settings;
    settings.access.creds = {"AKIDEXAMPLE", "secret", std::nullopt};
    settings.access.region = "eu-west-1";
    settings.access.endpoint = std::move(endpoint);
    settings.access.path_style = path_style;
    return settings;
}

std::string header_of(http::request const& r, std::string_view name) {
    for (auto const& [n, v] : r.headers)
        if (n == name)
            return v;
    return "";
}

} // namespace

TEST_CASE("requests to AWS are virtual-hosted, signed, with the key encoded the SigV4 way") {
    auto s3 = s3_store::open("s3://my-bucket/lake/pop/", settings_for(std::nullopt, false));
    REQUIRE(s3.has_value());
    auto r = (*s3)->signed_request("GET", "data/main/t/a b+c.parquet", false, {}, {}, {});
    CHECK(r.where.tls);
    CHECK(r.where.host == "my-bucket.s3.eu-west-1.amazonaws.com");
    CHECK(r.where.path == "/lake/pop/data/main/t/a%20b%2Bc.parquet");
    CHECK(header_of(r, "Authorization").starts_with("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"));
    CHECK(header_of(r, "Authorization").find("/eu-west-1/s3/aws4_request") != std::string::npos);
    CHECK(header_of(r, "x-amz-content-sha256") ==
          "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(!r.follow_redirects);
}

TEST_CASE("requests to a custom endpoint are path-style, and listings carry their query") {
    auto s3 = s3_store::open("s3://mirror/p/", settings_for("https://minio.internal:9000", true));
    REQUIRE(s3.has_value());
    auto r = (*s3)->signed_request("GET", "", true, {{"list-type", "2"}, {"prefix", "p/versions/"}}, {}, {});
    CHECK(r.where.host_header() == "minio.internal:9000");
    CHECK(r.where.path == "/mirror/");
    CHECK(r.where.query == "list-type=2&prefix=p%2Fversions%2F");
    auto put = (*s3)->signed_request("PUT", "fdl.json", false, {}, {{"If-None-Match", "*"}}, "{}");
    CHECK(put.where.path == "/mirror/p/fdl.json");
    CHECK(header_of(put, "If-None-Match") == "*");
    CHECK(header_of(put, "Authorization").find("if-none-match") != std::string::npos); // signed
    CHECK(header_of(put, "x-amz-content-sha256") ==
          "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"); // sha256("{}")
    CHECK(put.body == "{}");
}

TEST_CASE("a bucket name that cannot be a DNS label goes path-style even at AWS") {
    auto s3 = s3_store::open("s3://my.dotted.bucket/x/", settings_for(std::nullopt, false));
    REQUIRE(s3.has_value());
    auto r = (*s3)->signed_request("HEAD", "k", false, {}, {}, {});
    CHECK(r.where.host == "s3.eu-west-1.amazonaws.com");
    CHECK(r.where.path == "/my.dotted.bucket/x/k");
}
