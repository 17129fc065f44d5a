#pragma once
// A repository served over HTTP(S): read-only, cannot list. Discovery goes through HEAD,
// refs.json and the version.json records, as the spec intends.

#include "core/http/client.hpp"
#include "core/store/remembered_object.hpp"
#include "core/store/store.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mirror::store {

struct http_store_settings {
    http::client_settings client;
    bool allow_plain_http = false; ///< http:// only when the configuration says so
    /// Objects up to this size are remembered with their ETag or Last-Modified, so that
    /// rereading an unchanged one costs a 304: fdl.json, HEAD, refs.json, refs/* and the
    /// files of versions/ other than catalogs; never data files (read once, immutable).
    std::size_t remembered_object_bytes = 1024 * 1024;
    std::size_t remembered_total_bytes = 64 * 1024 * 1024;
};

/// Keeps idle keep-alive connections between calls: destroy it before the io_context it
/// ran on.
class http_store final : public store, public object_memory {
public:
    /// Opens the repository at `url` (http:// or https://). Fails with store_errc::rejected
    /// for a URL it refuses, or plain http:// without allow_plain_http. Makes no request.
    static result<std::unique_ptr<http_store>> open(std::string_view url, http_store_settings settings);
    ~http_store() override;

    store_caps caps() const override;
    std::string describe() const override;
    /// A HEAD request; the size is its Content-Length.
    awaitable<result<object_info>> stat(std::string key) override;
    /// A GET, conditional when the object was read before and is remembered.
    awaitable<result<void>> read(std::string key, io::byte_sink& out) override;

    /// Requests sent, and how many were answered 304 (for tests and documentation).
    struct counters {
        std::uint64_t requests = 0;
        std::uint64_t not_modified = 0;
    };
    counters const& counts() const { return counts_; }

    /// What is remembered for conditional requests, ordered by key, to keep across a
    /// restart (restore() takes it back).
    std::vector<remembered_object> remembered_objects() const override;
    /// Remembers `objects` as if this store had read them: a 304 serves their bytes, a 200
    /// replaces them. Skipped, since they come from outside the process: an unsafe key
    /// (key_problem), a key this store would not remember (a data file), a validator
    /// header other than If-None-Match or If-Modified-Since, a
    /// validator that is empty or not a printable header value, a key already remembered
    /// (what this process read is newer), and whatever exceeds remembered_object_bytes or,
    /// in the given order, remembered_total_bytes.
    void restore(std::vector<remembered_object> objects) override;
    object_memory* remembered() override { return this; }

private:
    struct remembered_entry {
        std::string validator_header; ///< "If-None-Match" or "If-Modified-Since"
        std::string validator;
        std::string bytes;
    };
    http_store(http::location base, http_store_settings settings);
    void remember(std::string const& key, http::response_head const& head, std::string bytes);
    void keep(std::string key, remembered_entry entry); ///< within remembered_total_bytes
    void forget(std::string const& key);

    http::location base_;
    http_store_settings settings_;
    std::unique_ptr<http::client> client_;
    std::map<std::string, remembered_entry, std::less<>> remembered_;
    std::size_t remembered_bytes_ = 0;
    counters counts_;
};

} // namespace mirror::store
