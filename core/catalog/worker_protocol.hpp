#pragma once
// What crosses the socket between a process and its sandboxed catalog readers
// (docs/design.md, "The catalog sandbox"). A request lists catalogs whose files travel
// beside it as descriptors; an answer gives, for each, its contents or why it could not be
// read. Both are framed (magic, protocol version, length) and encoded compactly: integers
// little-endian, strings and lists prefixed with their length.
//
// The parent decodes an answer as it decodes any outside input: it comes from a process
// that has just read hostile bytes, and may have been subverted by them. Every length is
// checked against what is left, every count against what it could cost, every code against
// the known ones, and every path against the rules a catalog's paths must follow.

#include "core/catalog/catalog_reader.hpp"
#include "verify/error.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mirror::catalog {

/// Raised whenever the encoding changes: a parent and a worker of different builds refuse
/// each other's frames rather than misread them.
inline constexpr std::uint32_t worker_protocol_version = 2;
inline constexpr std::size_t worker_frame_header_bytes = 20; ///< magic, version, kind, length

enum class frame_kind : std::uint32_t {
    hello = 0x4644'4c48,   ///< "FDLH": the worker is sandboxed and ready
    request = 0x4644'4c51, ///< "FDLQ"
    answer = 0x4644'4c41,  ///< "FDLA"
};

/// A frame's header: what follows, and how many bytes of it.
struct frame_header {
    frame_kind kind = frame_kind::hello;
    std::uint64_t length = 0;
};

std::string encode_frame_header(frame_kind kind, std::uint64_t length);
/// Fails (catalog_errc::reader_crashed, naming `who`) on a wrong magic or version, another
/// kind than `expected`, or a length past `max_length`.
result<frame_header> decode_frame_header(std::string_view bytes, frame_kind expected, std::uint64_t max_length,
                                         std::string const& who);

/// One catalog of a request; its file is the descriptor at the same position.
struct worker_item {
    std::string name; ///< the catalog's key, for messages
    read_options options;
};

/// A request: the folder its catalogs lie in (the only one the reader's DuckDB may open
/// files in), and the catalogs.
struct worker_request {
    std::string folder;
    std::vector<worker_item> items;
};

std::string encode_request(worker_request const& request);
/// The worker's side: fails with reader_crashed on anything malformed.
result<worker_request> decode_request(std::string_view payload);

std::string encode_answer(std::vector<result<catalog_contents>> const& outcomes);
/// The parent's side: exactly one outcome for each of `items` (the options each catalog
/// was read with), within its max_files files and its max_memory of memory (checked as
/// the contents are made), or reader_crashed ("answered garbage: …", naming `who`).
result<std::vector<result<catalog_contents>>> decode_answer(std::string_view payload,
                                                            std::span<read_options const> items,
                                                            std::string const& who);

} // namespace mirror::catalog
