#pragma once
// The store interface: a small required core plus declared capabilities
// (docs/development.md, "Stores").
// Keys are '/'-separated paths relative to the store's root, built by core from checked
// components; backends refuse `.`/`..`/empty segments anyway, as a second line.

#include "verify/error.hpp"
#include "core/io/byte_sink.hpp"
#include "core/io/net.hpp"
#include "core/store/remembered_object.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mirror::store {

/// What a backend can do; callers read it once and never probe.
struct store_caps {
    bool can_list = false;    ///< list() works (a folder, S3; not HTTP)
    bool can_write = false;   ///< open_writer() and remove() work
    bool create_only = false; ///< write_mode::create_only is atomic (exclusive link, If-None-Match)
    /// read_tagged() and write_conditional() work: the server compares tags atomically
    /// (S3's If-Match and If-None-Match on PUT). What several daemons coordinate on.
    bool conditional_writes = false;
};

struct object_info {
    std::uint64_t size = 0;
};

struct list_entry {
    std::string key; ///< relative to the store's root
    std::uint64_t size = 0;
};

enum class write_mode {
    create_only, ///< fail with io::store_errc::already_exists if the key exists
    replace,     ///< atomically replace what is there
};

/// A small object with the tag the store names its current bytes by (S3's ETag, quotes
/// taken off): a conditional write names it to replace exactly these bytes.
struct tagged_object {
    std::string bytes;
    std::string tag;
};

/// An object being written. Nothing is visible under the key until commit() succeeds;
/// destroying a writer without a successful commit() discards what was written.
class object_writer : public io::byte_sink {
public:
    /// Makes the object durable and visible under its key, complete.
    virtual awaitable<result<void>> commit() = 0;
};

/// A capability: the small objects a store remembers for conditional rereads (an HTTP
/// origin's ETags and Last-Modified dates), which its owner may keep across a restart.
class object_memory {
public:
    /// What is remembered, ordered by key.
    virtual std::vector<remembered_object> remembered_objects() const = 0;
    /// Remembers `objects` as if the store had read them; it checks each before trusting it.
    virtual void restore(std::vector<remembered_object> objects) = 0;

protected:
    ~object_memory() = default;
};

/// A repository root on some medium. All calls run on the I/O thread.
class store {
public:
    virtual ~store();
    virtual store_caps caps() const = 0;
    /// A name for messages: the folder path or URL (never credentials).
    virtual std::string describe() const = 0;
    /// Who answers its requests, for remembering how that server behaves (an S3 store's
    /// endpoint); "" when nothing but the store itself answers (a folder).
    virtual std::string server() const { return {}; }

    /// Size of the object; store_errc::not_found when absent.
    virtual awaitable<result<object_info>> stat(std::string key) = 0;
    /// Streams the object into `out`. A backend checks that it delivered the size it
    /// announced; callers check sizes and digests against what the repository pins.
    virtual awaitable<result<void>> read(std::string key, io::byte_sink& out) = 0;
    /// Calls `each` for every object under `prefix` (a folder ending in '/'), in no
    /// particular order; an absent prefix lists nothing. Needs caps().can_list.
    virtual awaitable<result<void>> list(std::string prefix, std::function<result<void>(list_entry)> each);
    /// Needs caps().can_write.
    virtual awaitable<result<std::unique_ptr<object_writer>>> open_writer(std::string key, write_mode mode);
    /// Deletes an object. An absent one is store_errc::not_found on a folder, and success
    /// on S3 (whose DELETE is idempotent): callers treat both as gone. Needs caps().can_write.
    virtual awaitable<result<void>> remove(std::string key);
    /// Discards what an earlier writer left unfinished under the store's root, which no
    /// reader can see but which costs storage: S3's incomplete multipart uploads of a pass
    /// that was killed. Returns how many were discarded (0 for backends that leave
    /// nothing behind). Only for a store that one writer uses at a time: an upload of
    /// another live writer would be aborted too (its commit then fails, and its next pass
    /// writes the object again).
    virtual awaitable<result<std::size_t>> discard_incomplete_writes();

    /// Reads a small object whole, with its tag; store_errc::too_large past `limit` bytes.
    /// Needs caps().conditional_writes.
    virtual awaitable<result<tagged_object>> read_tagged(std::string key, std::size_t limit);
    /// Writes `bytes` under `key` only if the object there is the one tagged `if_tag`
    /// (nullopt: only if there is none), atomically on the server. Returns the new tag;
    /// store_errc::conflict when the condition does not hold (another writer went first).
    /// A write whose answer was lost and whose retry finds these very bytes there
    /// succeeds. Needs caps().conditional_writes.
    virtual awaitable<result<std::string>> write_conditional(std::string key, std::string bytes,
                                                             std::optional<std::string> if_tag);
    /// The objects it remembers for conditional rereads, when it keeps any (an HTTP
    /// origin); null otherwise. Wrappers answer for the store they wrap.
    virtual object_memory* remembered() { return nullptr; }
};

/// Why `key` is not a safe object key for any backend: empty, a leading or doubled '/', a
/// "." or ".." segment, a NUL; nullopt when it is safe. Every backend refuses such a key
/// with store_errc::rejected before any I/O (a server might resolve the dots outside the
/// store's root).
std::optional<std::string> key_problem(std::string_view key);

/// The same for a list() prefix: "" (everything), or a safe key followed by '/'.
std::optional<std::string> prefix_problem(std::string_view prefix);

/// Reads a whole small object into memory; store_errc::too_large past `limit` bytes.
awaitable<result<std::string>> read_all(store& from, std::string key, std::size_t limit);

/// Like read_all, but an absent object is nullopt rather than an error.
awaitable<result<std::optional<std::string>>> read_if_present(store& from, std::string key, std::size_t limit);

/// Writes `bytes` under `key` through open_writer and commit.
awaitable<result<void>> write_all(store& to, std::string key, std::string bytes, write_mode mode);

} // namespace mirror::store
