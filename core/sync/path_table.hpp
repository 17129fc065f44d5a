#pragma once
// Lookups by data file path, held compactly: a pass or an audit of a repository of a
// million data files looks each one up by path, and holding each path as text would cost
// more than the rest of the entry.

#include "verify/sha256.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <unordered_map>

namespace mirror::sync {

/// A data file path as a table holds it: its SHA-256, salted with random bytes drawn once
/// per process, so that an origin that chooses its paths can neither make two share an
/// entry nor crowd them into one bucket of a table (a hash flood).
struct path_key {
    verify::sha256_digest digest;
    static path_key of(std::string_view path);
    bool operator==(path_key const&) const = default;
    /// The digest is uniform already: its first bytes are the bucket hash. noexcept, so
    /// that a table does not store a copy of the hash in each node.
    struct hash {
        std::size_t operator()(path_key const& key) const noexcept;
    };
};

/// Data file path -> Value, each path held as its path_key (32 bytes) rather than as
/// text: an entry of a path_table<std::uint64_t> costs about 64 bytes whatever the path's
/// length, against 180 or more in a std::map<std::string, std::uint64_t>, and a lookup
/// hashes the path asked about (about half a microsecond). Nothing can be listed back by
/// path: holders that need the paths keep them elsewhere. Entries never move once added.
template <typename Value>
class path_table {
public:
    /// Adds `path`; a path already there keeps its first value. True if added.
    bool add(std::string_view path, Value value) { return entries_.emplace(path_key::of(path), std::move(value)).second; }
    /// The value of `path`, or nullptr; valid while the table lives.
    Value const* find(std::string_view path) const {
        auto found = entries_.find(path_key::of(path));
        return found == entries_.end() ? nullptr : &found->second;
    }
    bool contains(std::string_view path) const { return entries_.contains(path_key::of(path)); }
    std::size_t size() const { return entries_.size(); }
    bool empty() const { return entries_.empty(); }

private:
    std::unordered_map<path_key, Value, path_key::hash> entries_;
};

/// Data file path -> size: a listing of data_dir as a pass or an audit looks it up.
using path_sizes = path_table<std::uint64_t>;

} // namespace mirror::sync
