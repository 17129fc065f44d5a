#include "core/store/s3_store.hpp"

#include "core/s3/xml_shape.hpp"

#include "core/fdl/paths.hpp"
#include "core/s3/aws_config.hpp"
#include "core/s3/s3_error.hpp"
#include "core/s3/xml_shape.hpp"
#include "core/store/detail/s3_exchange.hpp"
#include "core/io/errors.hpp"
#include "core/store/s3_writer.hpp"
#include "verify/sha256.hpp"

#include <charconv>
#include <set>

namespace mirror::store {

namespace {

using detail::send;
using detail::text_sink;

constexpr std::string_view empty_sha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

bool valid_bucket(std::string_view bucket) {
    if (bucket.size() < 3 || bucket.size() > 63)
        return false;
    for (char c : bucket)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-'))
            return false;
    return bucket.front() != '.' && bucket.front() != '-' && bucket.back() != '.' && bucket.back() != '-';
}

} // namespace

result<std::unique_ptr<s3_store>> s3_store::open(std::string_view url, s3_store_settings settings) {
    auto refuse = [&](std::string const& why) {
        return make_error(io::store_errc::rejected, std::string(url.substr(0, 200)) + ": " + why);
    };
    if (!url.starts_with("s3://"))
        return refuse("not an s3:// URL");
    std::string_view rest = url.substr(5);
    auto slash = rest.find('/');
    std::string bucket(rest.substr(0, slash));
    std::string prefix(slash == std::string_view::npos ? "" : rest.substr(slash + 1));
    if (!valid_bucket(bucket))
        return refuse("'" + bucket + "' is not a bucket name (3 to 63 lower-case letters, digits, '.' and '-')");
    if (!prefix.empty()) {
        if (!prefix.ends_with('/'))
            prefix += '/';
        if (auto problem = fdl::relative_path_problem(prefix.substr(0, prefix.size() - 1)))
            return refuse("the prefix: " + *problem);
    }
    std::string endpoint_url = settings.access.endpoint.value_or("https://s3." + settings.access.region + ".amazonaws.com");
    auto endpoint = http::parse_base(endpoint_url);
    if (!endpoint)
        return refuse("the endpoint: " + endpoint.error().message);
    if (!endpoint->tls && !settings.allow_plain_http)
        return refuse("the endpoint " + endpoint->text() +
                      " is plain http://, refused unless allowed explicitly (--allow-plain-http; in the daemon's "
                      "configuration, allow_plain_http: true in the store's entry): nothing would protect the "
                      "credentials' signatures and the bytes in transit");
    if (endpoint->path != "/")
        return refuse("the endpoint " + endpoint->text() + " has a path; give the bucket in the s3:// URL");
    if (s3::bucket_needs_path_style(bucket))
        settings.access.path_style = true; // e.g. a dotted name would not match the wildcard certificate
    bool tls = endpoint->tls;
    std::unique_ptr<s3_store> opened(
        new s3_store(std::move(bucket), std::move(prefix), std::move(*endpoint), std::move(settings)));
    if (auto failure = opened->client().tls_setup_failure(); failure && tls)
        return *failure; // refused now, not at the first request
    return opened;
}

namespace {
/// A 4xx that S3 calls transient (s3::classify): RequestTimeout, a body damaged in transit.
bool s3_transient_answer(unsigned status, std::string_view error_body) {
    return s3::classify(status, std::string(error_body), "").code == io::store_errc::transient;
}

http::client_settings with_s3_answers(http::client_settings client) {
    client.transient_answer = s3_transient_answer;
    return client;
}
} // namespace

s3_store::s3_store(std::string bucket, std::string prefix, http::location endpoint, s3_store_settings settings)
    : bucket_(std::move(bucket)), prefix_(std::move(prefix)), endpoint_(std::move(endpoint)),
      settings_(std::move(settings)), client_(std::make_unique<http::client>(with_s3_answers(settings_.client))) {}

s3_store::~s3_store() = default;

bool s3_store::take_part_slot() {
    if (parts_in_flight_ >= settings_.parallel_parts)
        return false;
    ++parts_in_flight_;
    return true;
}

void s3_store::return_part_slot() { --parts_in_flight_; }

store_caps s3_store::caps() const { return {true, true, true, true}; }

std::string s3_store::describe() const { return "s3://" + bucket_ + "/" + prefix_; }

std::string s3_store::server() const { return endpoint_.scheme() + "://" + endpoint_.host_header(); }

http::request s3_store::signed_request(std::string method, std::string const& key, bool bucket_level,
                                       std::vector<std::pair<std::string, std::string>> query,
                                       std::vector<std::pair<std::string, std::string>> headers,
                                       std::string body) const {
    http::request out;
    out.method = method;
    out.where = endpoint_;
    std::string object = bucket_level ? "" : s3::uri_encode(prefix_ + key, true);
    if (settings_.access.path_style) {
        out.where.path = "/" + bucket_ + "/" + object;
    } else {
        out.where.host = bucket_ + "." + endpoint_.host;
        out.where.path = "/" + object;
    }
    std::string query_text;
    for (auto const& [name, value] : query)
        query_text += (query_text.empty() ? "" : "&") + s3::uri_encode(name, false) + "=" + s3::uri_encode(value, false);
    out.where.query = query_text;
    std::string payload = body.empty() ? std::string(empty_sha256) : verify::to_hex(verify::sha256_of(body));
    s3::signing_request signing{method, out.where.host_header(), out.where.path, query, headers, payload};
    auto signed_with = s3::sign(signing, settings_.access.creds, settings_.access.region, "s3",
                                s3::amz_date_of(std::chrono::system_clock::now()));
    out.headers = std::move(headers);
    for (auto& header : signed_with.headers)
        out.headers.push_back(std::move(header));
    out.body = std::move(body);
    out.follow_redirects = false; // S3 redirects to another region: a configuration error
    return out;
}

awaitable<result<object_info>> s3_store::stat(std::string key) {
    if (auto problem = key_problem(key))
        co_return make_error(io::store_errc::rejected, describe() + ": " + *problem);
    auto request = signed_request("HEAD", key, false, {}, {}, {});
    auto head = co_await send(*this, std::move(request), nullptr);
    if (!head)
        co_return head.error();
    if (!head->content_length)
        co_return make_error(io::store_errc::rejected, describe() + key + ": no Content-Length in the answer to HEAD");
    co_return object_info{*head->content_length};
}

awaitable<result<void>> s3_store::read(std::string key, io::byte_sink& out) {
    if (auto problem = key_problem(key))
        co_return make_error(io::store_errc::rejected, describe() + ": " + *problem);
    auto request = signed_request("GET", key, false, {}, {}, {});
    auto got = co_await send(*this, std::move(request), &out);
    if (!got)
        co_return got.error();
    co_return result<void>();
}

namespace {
/// An ETag as a tag: its quotes off (`"abc"` and `abc` name the same bytes).
std::string tag_of(std::string etag) {
    if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"')
        etag = etag.substr(1, etag.size() - 2);
    return etag;
}
} // namespace

awaitable<result<tagged_object>> s3_store::read_tagged(std::string key, std::size_t limit) {
    if (auto problem = key_problem(key))
        co_return make_error(io::store_errc::rejected, describe() + ": " + *problem);
    text_sink body(limit);
    auto got = co_await send(*this, signed_request("GET", key, false, {}, {}, {}), &body);
    if (!got && got.error().code == io::store_errc::too_large) // the sink's refusal names no key
        co_return make_error(io::store_errc::too_large,
                             describe() + key + ": larger than the " + std::to_string(limit) + " bytes read whole");
    if (!got)
        co_return got.error();
    auto etag = got->header("etag");
    if (!etag || etag->empty())
        co_return make_error(io::store_errc::rejected, describe() + key + ": the answer to GET has no ETag");
    co_return tagged_object{std::move(body.text), tag_of(*etag)};
}

awaitable<result<std::string>> s3_store::write_conditional(std::string key, std::string bytes,
                                                          std::optional<std::string> if_tag) {
    if (auto problem = key_problem(key))
        co_return make_error(io::store_errc::rejected, describe() + ": " + *problem);
    std::vector<std::pair<std::string, std::string>> headers;
    if (if_tag)
        headers.emplace_back("If-Match", *if_tag);
    else
        headers.emplace_back("If-None-Match", "*");
    auto put = co_await send(*this, signed_request("PUT", key, false, {}, std::move(headers), bytes), nullptr);
    if (put) {
        if (auto etag = put->header("etag"); etag && !etag->empty())
            co_return tag_of(*etag);
        // No ETag in the answer: the tag of what is there now, if it is what was written.
    } else if (put.error().code != io::store_errc::already_exists && put.error().code != io::store_errc::not_found) {
        co_return put.error(); // 412 (or AWS's 404 for If-Match on a missing key): the condition failed
    }
    // The condition failed, or the answer said too little. A retried PUT whose first try
    // was stored finds its own bytes there: that write happened.
    auto there = co_await read_tagged(key, bytes.size() + 1);
    if (there && there->bytes == bytes)
        co_return there->tag;
    if (!there && there.error().code != io::store_errc::not_found && there.error().code != io::store_errc::too_large)
        co_return there.error();
    co_return make_error(io::store_errc::conflict,
                         describe() + key + ": not written, another writer changed it " +
                             (if_tag ? "since it was read (If-Match " + *if_tag + ")" : "(it exists now)"));
}

namespace {

/// What keeps one listing finite: a page count, a key count, a deadline, and never the
/// same continuation token twice (a server that gives one again would list for ever).
class listing_guard {
public:
    listing_guard(s3_store_settings const& settings, std::string what)
        : settings_(settings), what_(std::move(what)),
          deadline_(std::chrono::steady_clock::now() + settings.listing_time_limit) {}

    /// Checks a page's shape before anything is read from it.
    std::optional<error> page(std::string_view xml, std::string_view root) {
        if (auto problem = s3::xml_shape_problem(xml, root))
            return make_error(io::store_errc::rejected, what_ + ": a listing page that is not well-formed XML: " + *problem);
        return std::nullopt;
    }
    /// Counts a key; an error past the limit.
    std::optional<error> key() {
        if (++keys_ <= settings_.max_listing_keys)
            return std::nullopt;
        return cut("more than " + std::to_string(settings_.max_listing_keys) + " keys");
    }
    /// Takes the token (or marker) of the next page; an error when it must not be asked for.
    std::optional<error> next(std::string const& token) {
        if (!tokens_.insert(token).second)
            return cut("the server gave the same continuation token twice, after " + std::to_string(pages_) +
                       " pages");
        if (++pages_ >= settings_.max_listing_pages)
            return cut("more than " + std::to_string(settings_.max_listing_pages) + " pages");
        if (std::chrono::steady_clock::now() >= deadline_)
            return cut("still listing after " + std::to_string(settings_.listing_time_limit.count() / 1000) + " s");
        return std::nullopt;
    }

private:
    error cut(std::string const& why) const {
        return make_error(io::store_errc::rejected, what_ + ": the listing was cut: " + why + " (" +
                                                     std::to_string(keys_) + " keys listed)");
    }
    s3_store_settings const& settings_;
    std::string what_;
    std::chrono::steady_clock::time_point deadline_;
    std::set<std::string> tokens_;
    std::size_t pages_ = 1;
    std::uint64_t keys_ = 0;
};

} // namespace

awaitable<result<void>> s3_store::list(std::string prefix, std::function<result<void>(list_entry)> each) {
    if (auto problem = prefix_problem(prefix))
        co_return make_error(io::store_errc::rejected, describe() + ": " + *problem);
    listing_guard guard(settings_, describe() + prefix);
    std::optional<std::string> token;
    do {
        std::vector<std::pair<std::string, std::string>> query{{"list-type", "2"}, {"prefix", prefix_ + prefix}};
        if (token)
            query.emplace_back("continuation-token", *token);
        auto request = signed_request("GET", "", true, std::move(query), {}, {});
        // A page goes into memory, so a page cut short is asked for again whole (the
        // client resumes only bodies pinned to an ETag, and a listing has none).
        text_sink page(settings_.max_page_bytes);
        auto listed = co_await send(*this, request, &page);
        for (int again = 1; !listed && io::is_retryable(listed.error().code) && again < 3; ++again) {
            page.text.clear();
            listed = co_await send(*this, request, &page);
        }
        if (!listed)
            co_return listed.error();
        // One page at a time: a listing of any length never sits in memory whole.
        std::string_view xml = page.text;
        if (auto malformed = guard.page(xml, "ListBucketResult"))
            co_return *malformed;
        for (auto at = xml.find("<Contents>"); at != std::string_view::npos; at = xml.find("<Contents>", at + 1)) {
            auto end = xml.find("</Contents>", at);
            if (end == std::string_view::npos)
                co_return make_error(io::store_errc::rejected, describe() + prefix + ": a listing page is cut off");
            auto entry = xml.substr(at, end - at);
            auto key = s3::xml_text(entry, "Key");
            auto size_text = s3::xml_text(entry, "Size");
            std::uint64_t size = 0;
            if (!key || !size_text ||
                std::from_chars(size_text->data(), size_text->data() + size_text->size(), size).ec != std::errc())
                co_return make_error(io::store_errc::rejected, describe() + prefix + ": a listing entry without key or size");
            // S3 lists only keys under the prefix asked for; a server that lists others (a bug,
            // or a hostile one) must not make them this folder's.
            if (!key->starts_with(prefix_ + prefix))
                continue;
            if (auto over = guard.key())
                co_return *over;
            if (auto taken = each({key->substr(prefix_.size()), size}); !taken)
                co_return taken;
        }
        token.reset();
        if (s3::xml_text(xml, "IsTruncated") == "true") {
            token = s3::xml_text(xml, "NextContinuationToken");
            if (!token || token->empty())
                co_return make_error(io::store_errc::rejected, describe() + prefix + ": a truncated listing without a token");
            if (auto cut = guard.next(*token))
                co_return *cut;
        }
    } while (token);
    co_return result<void>();
}

awaitable<result<std::unique_ptr<object_writer>>> s3_store::open_writer(std::string key, write_mode mode) {
    if (auto problem = key_problem(key))
        co_return make_error(io::store_errc::rejected, describe() + ": " + *problem);
    co_return std::unique_ptr<object_writer>(make_s3_writer(*this, std::move(key), mode));
}

awaitable<result<void>> s3_store::remove(std::string key) {
    if (auto problem = key_problem(key))
        co_return make_error(io::store_errc::rejected, describe() + ": " + *problem);
    auto request = signed_request("DELETE", key, false, {}, {}, {});
    auto deleted = co_await send(*this, std::move(request), nullptr);
    if (!deleted)
        co_return deleted.error();
    co_return result<void>();
}

awaitable<result<std::size_t>> s3_store::discard_incomplete_writes() {
    std::size_t aborted = 0;
    std::optional<std::string> key_marker, id_marker;
    listing_guard guard(settings_, describe() + " (incomplete uploads)");
    do {
        std::vector<std::pair<std::string, std::string>> query{{"uploads", ""}, {"prefix", prefix_}};
        if (key_marker)
            query.emplace_back("key-marker", *key_marker);
        if (id_marker)
            query.emplace_back("upload-id-marker", *id_marker);
        auto request = signed_request("GET", "", true, std::move(query), {}, {});
        text_sink page(settings_.max_page_bytes);
        auto listed = co_await send(*this, std::move(request), &page);
        if (!listed && listed.error().code == io::store_errc::unsupported)
            co_return aborted; // a server without multipart listings (s3rver): nothing to find
        if (!listed)
            co_return with_context(listed.error(), "listing incomplete uploads");
        std::string_view xml = page.text;
        if (auto malformed = guard.page(xml, "ListMultipartUploadsResult"))
            co_return *malformed;
        for (auto at = xml.find("<Upload>"); at != std::string_view::npos; at = xml.find("<Upload>", at + 1)) {
            auto end = xml.find("</Upload>", at);
            if (end == std::string_view::npos)
                co_return make_error(io::store_errc::rejected, describe() + ": a page of incomplete uploads is cut off");
            auto entry = xml.substr(at, end - at);
            auto key = s3::xml_text(entry, "Key");
            auto id = s3::xml_text(entry, "UploadId");
            if (!key || !id || id->empty())
                co_return make_error(io::store_errc::rejected, describe() + ": an incomplete upload without key or id");
            if (!key->starts_with(prefix_) || key_problem(key->substr(prefix_.size())))
                continue; // not ours to touch
            auto abort = signed_request("DELETE", key->substr(prefix_.size()), false, {{"uploadId", *id}}, {}, {});
            auto gone = co_await send(*this, std::move(abort), nullptr);
            if (!gone && gone.error().code != io::store_errc::not_found) // NoSuchUpload: finished meanwhile
                co_return gone.error();
            ++aborted;
        }
        key_marker.reset();
        id_marker.reset();
        if (s3::xml_text(xml, "IsTruncated") == "true") {
            key_marker = s3::xml_text(xml, "NextKeyMarker");
            id_marker = s3::xml_text(xml, "NextUploadIdMarker");
            if (!key_marker || key_marker->empty())
                co_return make_error(io::store_errc::rejected,
                                     describe() + ": a truncated list of incomplete uploads without a marker");
            if (auto cut = guard.next(*key_marker + "\n" + id_marker.value_or("")))
                co_return *cut;
        }
    } while (key_marker);
    co_return aborted;
}

} // namespace mirror::store
