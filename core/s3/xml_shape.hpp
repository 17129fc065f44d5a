#pragma once
// Whether an S3 answer is well-formed XML before anything is read from it: a page cut
// short, left unclosed or nested without end is refused, never read as an empty listing.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace mirror::s3 {

/// Why `xml` is not one well-formed element named `root` (an XML declaration, comments and
/// whitespace may stand around it): an element left open, a closing tag that matches
/// none, nesting deeper than `max_depth`, a DOCTYPE (no entity of a server's is ever
/// expanded), or anything after the root. nullopt when it is well-formed. Attributes and
/// text are not interpreted; only the shape of the tags is checked.
std::optional<std::string> xml_shape_problem(std::string_view xml, std::string_view root, std::size_t max_depth = 32);

} // namespace mirror::s3
