#include "core/store/open_store.hpp"

#include "core/http/url.hpp"
#include "core/io/errors.hpp"
#include "core/store/http_store.hpp"
#include "core/store/local_store.hpp"
#include "core/store/s3_parts.hpp"
#include "core/store/s3_store.hpp"

#include <algorithm>

namespace mirror::store {

std::string user_agent() { return std::string("fdl-mirror/") + FDL_MIRROR_CORE_VERSION; }

namespace {

result<std::unique_ptr<store>> open_unthrottled(std::string_view location, store_role role, io::blocking_pool* pool,
                                                store_options const& options) {
    // Every message names the location masked: a secret written into it never reaches a log.
    std::string where = http::masked_location(location);
    if (location.empty())
        return make_error(io::store_errc::rejected, "empty location");
    auto scheme_end = location.find("://");
    std::string path;
    std::string normalized; // schemes are case-insensitive (RFC 3986): S3:// is s3://
    if (scheme_end == std::string_view::npos) {
        path = std::string(location);
    } else {
        auto authority = location.substr(scheme_end + 3);
        authority = authority.substr(0, authority.find_first_of("/?#"));
        if (authority.find('@') != std::string_view::npos)
            return make_error(io::store_errc::rejected,
                              where + ": holds user information, and credentials never go in a location (S3 keys come "
                                      "from the environment or ~/.aws, as the AWS CLI reads them)");
        normalized = std::string(location);
        std::transform(normalized.begin(), normalized.begin() + static_cast<std::ptrdiff_t>(scheme_end),
                       normalized.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        location = normalized;
        std::string_view scheme = location.substr(0, scheme_end);
        if (scheme == "file") {
            path = std::string(location.substr(scheme_end + 3));
            if (path.empty() || path.front() != '/')
                return make_error(io::store_errc::rejected, where + ": a file:// URL needs an absolute path (file:///…)");
        } else if (scheme == "http" || scheme == "https") {
            if (role == store_role::mirror)
                return make_error(io::store_errc::unsupported, where + ": an HTTP store is read-only; a mirror must be a "
                                                                   "folder or s3://");
            http_store_settings settings;
            settings.allow_plain_http = options.allow_plain_http;
            settings.client.ca_bundle = options.ca_bundle;
            settings.client.user_agent = user_agent();
            settings.client.observer = options.observer;
            settings.client.redirect_hosts = options.redirect_hosts;
            settings.client.memory = options.memory;
            settings.client.receive_pool = pool;
            auto opened = http_store::open(location, std::move(settings));
            if (!opened)
                return opened.error();
            return std::unique_ptr<store>(std::move(*opened));
        } else if (scheme == "s3") {
            auto access = s3::resolve_s3(options.s3, s3::current_environment());
            if (!access)
                return with_context(access.error(), where);
            s3_store_settings settings;
            settings.access = {access->creds, access->region, access->endpoint, access->path_style};
            settings.allow_plain_http = options.allow_plain_http;
            settings.client.ca_bundle = options.ca_bundle ? options.ca_bundle : access->ca_bundle;
            settings.client.user_agent = user_agent();
            settings.client.observer = options.observer;
            // Unset, the part size fits the budget (s3_parts.hpp): a small one holds several;
            // and so does the threshold, or a buffer would fill past a part before the first.
            settings.part_bytes = options.part_bytes ? *options.part_bytes
                                  : options.memory   ? part_bytes_for_budget(options.memory->capacity())
                                                     : default_part_bytes;
            settings.multipart_threshold = options.multipart_threshold
                                               ? *options.multipart_threshold
                                               : std::min(settings.multipart_threshold, settings.part_bytes);
            settings.memory = options.memory;
            settings.client.memory = options.memory;
            settings.client.receive_pool = pool;
            auto opened = s3_store::open(location, std::move(settings));
            if (!opened)
                return opened.error();
            return std::unique_ptr<store>(std::move(*opened));
        } else {
            return make_error(io::store_errc::unsupported, where + ": unknown scheme '" + std::string(scheme) + "'");
        }
    }
    auto opened = local_store::open(path, role == store_role::mirror, pool);
    if (!opened)
        return opened.error();
    (*opened)->set_memory(options.memory);
    return std::unique_ptr<store>(std::move(*opened));
}

} // namespace

result<std::unique_ptr<store>> open_store(std::string_view location, store_role role, io::blocking_pool* pool,
                                          store_options const& options) {
    auto opened = open_unthrottled(location, role, pool, options);
    if (!opened)
        return opened.error();
    return throttled(std::move(*opened), options.limits);
}

} // namespace mirror::store
