#pragma once
// How much memory a JSON file's tree may take while it is parsed. A tree costs several
// times its text (each value is a 16-byte node, each object a table of its keys): a
// hostile file of small values, under its size limit, could otherwise cost gigabytes.

#include <cstddef>

namespace mirror::fdl {

/// The tree every FDL file may take when its caller gives no limit of its own: the small
/// files (refs.json, at most 16 MiB, is the largest) stay well within it. files.json and
/// dataset.json are parsed within what the process's memory budget allows one version.
inline constexpr std::size_t default_max_tree_bytes = std::size_t{256} << 20;

} // namespace mirror::fdl
