#pragma once
// A repository in an S3 bucket (AWS, or an S3-compatible store behind a custom endpoint):
// read and write, SigV4-signed, listed with ListObjectsV2 page by page, large objects
// uploaded in parts, create-only writes with If-None-Match: *.

#include "core/http/client.hpp"
#include "core/s3/sigv4.hpp"
#include "core/io/memory_budget.hpp"
#include "core/store/store.hpp"

#include <memory>
#include <optional>
#include <string>

namespace mirror::store {

/// How to reach the bucket.
struct s3_access {
    s3::credentials creds;
    std::string region = "us-east-1";
    /// "https://host:port" of an S3-compatible store; AWS's regional endpoint when unset.
    std::optional<std::string> endpoint;
    bool path_style = false; ///< bucket in the path, not in the host name
};

struct s3_store_settings {
    s3_access access;
    http::client_settings client;
    bool allow_plain_http = false;                ///< an http:// endpoint (loopback test stores)
    /// Objects larger than this go up in a multipart upload, smaller ones in one PUT.
    std::size_t multipart_threshold = 16 * 1024 * 1024;
    /// The size of each part but the last (S3 wants at least 5 MiB, and at most 10,000
    /// parts): of the first 800; later ones grow (s3_parts.hpp, part_bytes_at).
    std::size_t part_bytes = 16 * 1024 * 1024;
    /// Parts sent in the background at once, across every upload of the store; each holds
    /// a part in memory. 0 sends each part before taking more bytes.
    std::size_t parallel_parts = 4;
    std::size_t max_page_bytes = 16 * 1024 * 1024; ///< a ListObjectsV2 page larger than this is refused
    /// What keeps one listing finite, whatever a server answers (pages that are never the
    /// last, continuation tokens given again): past any of these the listing fails, saying
    /// which was reached. A repository's own limits (refs, versions, files of a version)
    /// stay far below them: S3 gives up to 1,000 keys a page.
    std::size_t max_listing_pages = 20'000;
    std::uint64_t max_listing_keys = 10'000'000;
    std::chrono::milliseconds listing_time_limit{30 * 60 * 1000};
    /// The process's memory budget: each upload buffer past 256 KiB (a part, or a small
    /// object's bytes) is granted from it. Null: no budget.
    io::memory_budget* memory = nullptr;
};

class s3_store final : public store {
public:
    /// Opens `url` ("s3://bucket/prefix/"). Fails with store_errc::rejected for a URL or an
    /// endpoint it refuses. Makes no request.
    static result<std::unique_ptr<s3_store>> open(std::string_view url, s3_store_settings settings);
    ~s3_store() override;

    store_caps caps() const override;
    std::string describe() const override;
    /// The endpoint, "https://host:port" (the same bucket behind another endpoint may be
    /// another server).
    std::string server() const override;
    awaitable<result<object_info>> stat(std::string key) override;
    awaitable<result<void>> read(std::string key, io::byte_sink& out) override;
    awaitable<result<void>> list(std::string prefix, std::function<result<void>(list_entry)> each) override;
    awaitable<result<std::unique_ptr<object_writer>>> open_writer(std::string key, write_mode mode) override;
    awaitable<result<void>> remove(std::string key) override;
    /// Aborts every incomplete multipart upload under the prefix (ListMultipartUploads,
    /// then AbortMultipartUpload for each), page by page.
    awaitable<result<std::size_t>> discard_incomplete_writes() override;
    /// GET, and the ETag of the answer.
    awaitable<result<tagged_object>> read_tagged(std::string key, std::size_t limit) override;
    /// One PUT with `If-Match: TAG` (the ETag without its quotes, the one form Ceph RGW
    /// matches) or `If-None-Match: *`. A server that ignores these headers (s3rver) makes
    /// this unconditional: the daemon probes before it relies on them (coord/probe).
    awaitable<result<std::string>> write_conditional(std::string key, std::string bytes,
                                                     std::optional<std::string> if_tag) override;

    /// A signed request for an object key below the root (or the bucket when `key` is
    /// empty and `bucket_level`). Public for the writer; not for callers.
    http::request signed_request(std::string method, std::string const& key, bool bucket_level,
                                 std::vector<std::pair<std::string, std::string>> query,
                                 std::vector<std::pair<std::string, std::string>> headers, std::string body) const;
    http::client& client() { return *client_; }
    /// The writers' budget of parallel parts: take_part_slot() is false when it is spent;
    /// every slot taken is given back with return_part_slot(). For the writer only.
    bool take_part_slot();
    void return_part_slot();
    s3_store_settings const& settings() const { return settings_; }

private:
    s3_store(std::string bucket, std::string prefix, http::location endpoint, s3_store_settings settings);

    std::string bucket_;
    std::string prefix_; ///< "" or ending in '/'
    http::location endpoint_;
    s3_store_settings settings_;
    std::unique_ptr<http::client> client_;
    std::size_t parts_in_flight_ = 0;
};

} // namespace mirror::store
