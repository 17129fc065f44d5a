#pragma once
// Reading the documents of a YAML text with yaml-cpp 0.7, without its LoadAll: on some
// malformed text (",", ",[") LoadAll never returns. Its parser makes no progress there and
// reports an empty document each time it is asked for the next one, and LoadAll asks until
// memory runs out (fixed upstream after 0.8.0: jbeder/yaml-cpp#1318 and #1319; Debian 12
// has 0.7.0). Private to config/.

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>

namespace mirror::config::detail {

/// What a configuration file holds, as far as it is read.
struct yaml_documents {
    YAML::Node first;                 ///< the first document (null when the text is empty)
    std::optional<YAML::Mark> second; ///< where a second document starts, if there is one
    std::optional<YAML::Mark> stuck;  ///< where yaml-cpp stopped making progress, if it did
};

/// Reads the first document of `text` and looks for a second one, never more than a
/// third: every call ends. When the parser stops advancing (a document would start where
/// the one before did), `stuck` says where, and the text is not YAML yaml-cpp can read.
/// Throws YAML::Exception for a syntax error, as YAML::Load does.
yaml_documents load_documents(std::string const& text);

} // namespace mirror::config::detail
