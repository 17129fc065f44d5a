#include "core/io/request_observer.hpp"

namespace mirror::io {

request_observer::~request_observer() = default;

char const* to_string(request_failure failure) noexcept {
    switch (failure) {
    case request_failure::none: return "";
    case request_failure::dns: return "dns";
    case request_failure::connect: return "connect";
    case request_failure::tls: return "tls";
    case request_failure::timeout: return "timeout";
    case request_failure::reset: return "reset";
    case request_failure::truncated: return "truncated";
    case request_failure::protocol: return "protocol";
    case request_failure::throttled: return "throttled";
    case request_failure::server_error: return "server_error";
    }
    return "protocol";
}

} // namespace mirror::io
