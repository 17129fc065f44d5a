#pragma once
// Classifying S3's answers once, at the edge (docs/development.md, "Errors"): the status and the XML
// <Code> of an error body become the store's error vocabulary.

#include "verify/error.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace mirror::s3 {

/// The text of the first <tag>…</tag> in `xml`, entities decoded; nullopt when absent.
std::optional<std::string> xml_text(std::string_view xml, std::string_view tag);

/// XML character entities (&amp; &lt; &gt; &quot; &apos; and numeric ones) decoded.
std::string xml_unescape(std::string_view text);

/// The store error for a failed S3 answer: NoSuchKey, NoSuchBucket and 404 are
/// not_found; AccessDenied, InvalidAccessKeyId, SignatureDoesNotMatch, ExpiredToken, 401
/// and 403 access_denied; PreconditionFailed and 412 already_exists (a create-only write
/// lost); SlowDown, InternalError, ServiceUnavailable, RequestTimeout, 429 and 5xx
/// transient; others rejected. The message names `what`, the status and S3's code and
/// message, never a credential.
error classify(unsigned status, std::string_view body, std::string const& what);

} // namespace mirror::s3
