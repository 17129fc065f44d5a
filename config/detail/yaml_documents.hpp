#pragma once
// Reading the documents of a YAML text with yaml-cpp 0.7, without its LoadAll: on some
// malformed text (",", ",[") LoadAll never returns. Its parser makes no progress there and
// reports an empty document each time it is asked for the next one, and LoadAll asks until
// memory runs out (fixed upstream after 0.8.0: jbeder/yaml-cpp#1318 and #1319; Debian 12
// has 0.7.0). Private to config/.

#include "config/detail/yaml_reader.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
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

/// The text of the file at `path`, or nullopt with why not in `problems` (as a whole-file
/// problem: "cannot read: no such file", "…: larger than 4MiB, too large for `kind`").
std::optional<std::string> read_config_file(std::filesystem::path const& path, std::uintmax_t max_size,
                                            std::string_view kind, problem_list& problems);

/// The top-level mapping of a one-document file, or nullopt with the reason in `problems`:
/// a syntax error, text yaml-cpp cannot read, an empty file (`if_empty`), or a root that is
/// not a mapping ("`what` must be a mapping of keys"). A second document is recorded as a
/// problem, and the first is still returned so that its problems are found too.
std::optional<YAML::Node> load_root(std::string const& text, std::string_view what, std::string_view if_empty,
                                    problem_list& problems);

} // namespace mirror::config::detail
