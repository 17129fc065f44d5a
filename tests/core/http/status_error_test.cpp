#include "core/http/status.hpp"
#include <doctest/doctest.h>

#include "core/io/errors.hpp"

using namespace mirror;
using io::store_errc;

TEST_CASE("status_error: what a final HTTP status means, 501 being a feature the server lacks") {
    struct expected {
        unsigned status;
        store_errc kind;
    };
    for (auto const& e : {expected{404, store_errc::not_found}, expected{410, store_errc::not_found},
                          expected{401, store_errc::access_denied}, expected{403, store_errc::access_denied},
                          expected{408, store_errc::transient}, expected{429, store_errc::transient},
                          expected{500, store_errc::transient}, expected{502, store_errc::transient},
                          expected{503, store_errc::transient}, expected{501, store_errc::unsupported},
                          expected{400, store_errc::rejected}, expected{416, store_errc::rejected}}) {
        CAPTURE(e.status);
        auto failure = http::status_error(e.status, "GET http://h/k");
        CHECK(failure.code == e.kind);
        CHECK(failure.message.starts_with("GET http://h/k: HTTP " + std::to_string(e.status)));
    }
}

TEST_CASE("is_http_status: 100 to 599, what HTTP defines, the rest of three digits is not a status") {
    for (unsigned status : {100u, 200u, 304u, 404u, 599u})
        CHECK(http::is_http_status(status));
    for (unsigned status : {0u, 2u, 99u, 600u, 999u})
        CHECK_FALSE(http::is_http_status(status));
}
