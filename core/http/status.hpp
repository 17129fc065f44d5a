#pragma once
// What an HTTP status means to the client and the stores: which numbers are statuses at
// all, which redirect, and the store error a final one stands for.

#include "verify/error.hpp"

#include <string>

namespace mirror::http {

/// 100 to 599, the statuses HTTP defines. A parser reads any three digits.
bool is_http_status(unsigned status) noexcept;

/// 301, 302, 303, 307 and 308: the redirects the client follows when asked to.
bool is_redirect(unsigned status) noexcept;

/// The store error a final status means: 404 and 410 not_found, 401 and 403
/// access_denied, 501 unsupported, 408, 429 and other 5xx transient, other statuses
/// rejected. `what` names the object. Not for 2xx or 304.
error status_error(unsigned status, std::string const& what);

} // namespace mirror::http
