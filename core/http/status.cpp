#include "core/http/status.hpp"

#include "core/io/errors.hpp"

namespace mirror::http {

bool is_http_status(unsigned status) noexcept { return status >= 100 && status <= 599; }

bool is_redirect(unsigned status) noexcept {
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

error status_error(unsigned status, std::string const& what) {
    std::string message = what + ": HTTP " + std::to_string(status);
    if (status == 404 || status == 410)
        return make_error(io::store_errc::not_found, message + " (not found)");
    if (status == 401 || status == 403)
        return make_error(io::store_errc::access_denied, message + " (access denied)");
    if (status == 501) // Not Implemented: the server does not do this, and will not on a retry
        return make_error(io::store_errc::unsupported, message + " (not implemented by the server)");
    if (status == 408 || status == 429 || (status >= 500 && status < 600))
        return make_error(io::store_errc::transient, message);
    return make_error(io::store_errc::rejected, message);
}

} // namespace mirror::http
