#pragma once
// The only switch on a location's scheme: which backend serves it.

#include "core/s3/aws_config.hpp"
#include "core/io/blocking_pool.hpp"
#include "core/io/memory_budget.hpp"
#include "core/io/request_observer.hpp"
#include "core/store/store.hpp"
#include "core/store/throttled_store.hpp"

#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>

namespace mirror::store {

enum class store_role { origin, mirror };

/// "fdl-mirror/<version>", sent with every HTTP request.
std::string user_agent();

/// How to reach stores over the network.
struct store_options {
    bool allow_plain_http = false;                  ///< accept http:// origins and S3 endpoints
    std::optional<std::filesystem::path> ca_bundle; ///< TLS roots instead of the system's (or S3's)
    s3::s3_settings s3;                             ///< wins over the environment and ~/.aws
    /// Request and byte rates the opened store is held to (throttled()); shared by every
    /// store opened with the same pointer. Null or without rates: unlimited.
    std::shared_ptr<throttle> limits;
    /// Told of every HTTP exchange of an http(s):// or s3:// store (each retry, part and
    /// listing page); a folder store makes none. Null: nobody is told.
    std::shared_ptr<io::request_observer> observer;
    /// S3 uploads: objects this large go in parts of part_bytes (s3_store_settings' defaults when unset).
    std::optional<std::size_t> multipart_threshold;
    std::optional<std::size_t> part_bytes;
    /// The process's memory budget, which S3 upload buffers and HTTP(S) and S3 read
    /// buffers draw on; null: none. It must outlive the store.
    io::memory_budget* memory = nullptr;
    /// http(s):// origins: hosts ("host" or "host:port") besides the origin's own that its
    /// redirects may lead to (core/http/redirects.hpp); none by default.
    std::vector<std::string> redirect_hosts;
};

/// Opens the store a location names: a folder path or a `file://` URL, an `http(s)://`
/// URL (an origin only: HTTP is read-only), or `s3://bucket/prefix/` (credentials,
/// region, endpoint and addressing resolved as the AWS tools do: s3::resolve_s3, with
/// the process environment read now). Any other scheme is store_errc::unsupported. A mirror is
/// opened writable (its folder created when absent); an origin read-only, and a folder
/// origin must exist. Blocking file I/O, and the receiving of large bodies over plain
/// HTTP (http::client_settings::receive_pool), run on `pool` (which must outlive the store)
/// when one is given.
result<std::unique_ptr<store>> open_store(std::string_view location, store_role role, io::blocking_pool* pool,
                                          store_options const& options = {});

} // namespace mirror::store
