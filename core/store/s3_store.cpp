#include "core/store/s3_store.hpp"

#include "core/fdl/paths.hpp"
#include "core/s3/aws_config.hpp"
#include "core/s3/s3_error.hpp"
#include "core/store/errors.hpp"
#include "verify/sha256.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include <charconv>

namespace mirror::store {

namespace {

constexpr std::string_view empty_sha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// Collects a small answer body (a listing page, an upload id) under a limit.
class text_sink final : public byte_sink {
public:
    explicit text_sink(std::size_t limit) : limit_(limit) {}
    awaitable<result<void>> write(std::span<std::byte const> bytes) override {
        if (text.size() + bytes.size() > limit_)
            co_return make_error(store_errc::too_large, "an S3 answer larger than " + std::to_string(limit_) + " bytes");
        text.append(reinterpret_cast<char const*>(bytes.data()), bytes.size());
        co_return result<void>();
    }
    std::string text;

private:
    std::size_t limit_;
};

bool valid_bucket(std::string_view bucket) {
    if (bucket.size() < 3 || bucket.size() > 63)
        return false;
    for (char c : bucket)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-'))
            return false;
    return bucket.front() != '.' && bucket.front() != '-' && bucket.back() != '.' && bucket.back() != '-';
}

/// Sends a signed request and judges the answer: an error unless 2xx.
awaitable<result<http::response_head>> send(s3_store& s3, http::request request, byte_sink* body) {
    std::string what = request.method + " " + request.where.text();
    auto answer = co_await s3.client().fetch(std::move(request), body);
    if (!answer)
        co_return answer.error();
    if (answer->status < 200 || answer->status >= 300)
        co_return s3::classify(answer->status, answer->error_body, what);
    co_return answer;
}

/// Buffers an object; small ones go up in one PUT at commit, large ones in parts of
/// part_bytes as they fill, completed at commit. An upload not committed is aborted, so
/// no orphan parts stay behind.
class s3_writer final : public object_writer {
public:
    s3_writer(s3_store& s3, std::string key, write_mode mode) : s3_(s3), key_(std::move(key)), mode_(mode) {}

    ~s3_writer() override {
        if (upload_id_ && !committed_) {
            // Destructors cannot wait: the abort runs on its own, and the store outlives it.
            auto request = s3_.signed_request("DELETE", key_, false, {{"uploadId", *upload_id_}}, {}, {});
            net::co_spawn(executor_, abort(s3_, std::move(request)), net::detached);
        }
    }

    awaitable<result<void>> write(std::span<std::byte const> bytes) override {
        buffer_.append(reinterpret_cast<char const*>(bytes.data()), bytes.size());
        while (buffer_.size() > s3_.settings().part_bytes) {
            // More than one part's worth: send one (the last part is sent at commit).
            std::string part = buffer_.substr(0, s3_.settings().part_bytes);
            buffer_.erase(0, s3_.settings().part_bytes);
            auto sent = co_await upload_part(std::move(part));
            if (!sent)
                co_return sent;
        }
        co_return result<void>();
    }

    awaitable<result<void>> commit() override {
        std::vector<std::pair<std::string, std::string>> headers;
        if (mode_ == write_mode::create_only)
            headers.emplace_back("If-None-Match", "*");
        if (!upload_id_) {
            auto request = s3_.signed_request("PUT", key_, false, {}, std::move(headers), std::move(buffer_));
            auto put = co_await send(s3_, std::move(request), nullptr);
            if (!put)
                co_return put.error();
            committed_ = true;
            co_return result<void>();
        }
        if (!buffer_.empty()) {
            std::string last = std::move(buffer_);
            auto sent = co_await upload_part(std::move(last));
            if (!sent)
                co_return sent;
        }
        std::string xml = "<CompleteMultipartUpload>";
        for (std::size_t i = 0; i < etags_.size(); ++i)
            xml += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" + etags_[i] + "</ETag></Part>";
        xml += "</CompleteMultipartUpload>";
        auto request = s3_.signed_request("POST", key_, false, {{"uploadId", *upload_id_}}, std::move(headers),
                                          std::move(xml));
        text_sink answer(64 * 1024);
        auto done = co_await send(s3_, std::move(request), &answer);
        if (!done)
            co_return done.error();
        // CompleteMultipartUpload may fail after a 200, with an <Error> in the body.
        if (answer.text.find("<Error>") != std::string::npos)
            co_return s3::classify(500, answer.text, "completing the upload of " + key_);
        committed_ = true;
        co_return result<void>();
    }

private:
    static awaitable<void> abort(s3_store& s3, http::request request) {
        auto aborted = co_await send(s3, std::move(request), nullptr);
        (void)aborted; // best effort: a bucket lifecycle rule should clean what this misses
    }

    awaitable<result<void>> upload_part(std::string part) {
        executor_ = co_await net::this_coro::executor;
        if (!upload_id_) {
            auto request = s3_.signed_request("POST", key_, false, {{"uploads", ""}}, {}, {});
            text_sink answer(64 * 1024);
            auto created = co_await send(s3_, std::move(request), &answer);
            if (!created)
                co_return created.error();
            auto id = s3::xml_text(answer.text, "UploadId");
            if (!id || id->empty())
                co_return make_error(store_errc::rejected, key_ + ": the store gave no UploadId");
            upload_id_ = *id;
        }
        std::string number = std::to_string(etags_.size() + 1);
        auto request = s3_.signed_request("PUT", key_, false, {{"partNumber", number}, {"uploadId", *upload_id_}}, {},
                                          std::move(part));
        auto put = co_await send(s3_, std::move(request), nullptr);
        if (!put)
            co_return put.error();
        auto etag = put->header("etag");
        if (!etag)
            co_return make_error(store_errc::rejected, key_ + ": part " + number + " came back without an ETag");
        etags_.push_back(*etag);
        co_return result<void>();
    }

    s3_store& s3_;
    std::string key_;
    write_mode mode_;
    std::string buffer_;
    std::optional<std::string> upload_id_;
    std::vector<std::string> etags_;
    bool committed_ = false;
    net::any_io_executor executor_;
};

} // namespace

result<std::unique_ptr<s3_store>> s3_store::open(std::string_view url, s3_store_settings settings) {
    auto refuse = [&](std::string const& why) {
        return make_error(store_errc::rejected, std::string(url.substr(0, 200)) + ": " + why);
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
        return refuse("the endpoint " + endpoint->text() + " is plain http://, refused unless allowed explicitly");
    if (endpoint->path != "/")
        return refuse("the endpoint " + endpoint->text() + " has a path; give the bucket in the s3:// URL");
    if (s3::bucket_needs_path_style(bucket))
        settings.access.path_style = true; // e.g. a dotted name would not match the wildcard certificate
    return std::unique_ptr<s3_store>(new s3_store(std::move(bucket), std::move(prefix), std::move(*endpoint),
                                                  std::move(settings)));
}

s3_store::s3_store(std::string bucket, std::string prefix, http::location endpoint, s3_store_settings settings)
    : bucket_(std::move(bucket)), prefix_(std::move(prefix)), endpoint_(std::move(endpoint)),
      settings_(std::move(settings)), client_(std::make_unique<http::client>(settings_.client)) {}

s3_store::~s3_store() = default;

store_caps s3_store::caps() const { return {true, true, true}; }

std::string s3_store::describe() const { return "s3://" + bucket_ + "/" + prefix_; }

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
    auto request = signed_request("HEAD", key, false, {}, {}, {});
    auto head = co_await send(*this, std::move(request), nullptr);
    if (!head)
        co_return head.error();
    if (!head->content_length)
        co_return make_error(store_errc::rejected, describe() + key + ": no Content-Length in the answer to HEAD");
    co_return object_info{*head->content_length};
}

awaitable<result<void>> s3_store::read(std::string key, byte_sink& out) {
    auto request = signed_request("GET", key, false, {}, {}, {});
    auto got = co_await send(*this, std::move(request), &out);
    if (!got)
        co_return got.error();
    co_return result<void>();
}

awaitable<result<void>> s3_store::list(std::string prefix, std::function<result<void>(list_entry)> each) {
    std::optional<std::string> token;
    do {
        std::vector<std::pair<std::string, std::string>> query{{"list-type", "2"}, {"prefix", prefix_ + prefix}};
        if (token)
            query.emplace_back("continuation-token", *token);
        auto request = signed_request("GET", "", true, std::move(query), {}, {});
        text_sink page(settings_.max_page_bytes);
        auto listed = co_await send(*this, std::move(request), &page);
        if (!listed)
            co_return listed.error();
        // One page at a time: a listing of any length never sits in memory whole.
        std::string_view xml = page.text;
        for (auto at = xml.find("<Contents>"); at != std::string_view::npos; at = xml.find("<Contents>", at + 1)) {
            auto end = xml.find("</Contents>", at);
            if (end == std::string_view::npos)
                co_return make_error(store_errc::rejected, describe() + prefix + ": a listing page is cut off");
            auto entry = xml.substr(at, end - at);
            auto key = s3::xml_text(entry, "Key");
            auto size_text = s3::xml_text(entry, "Size");
            std::uint64_t size = 0;
            if (!key || !size_text ||
                std::from_chars(size_text->data(), size_text->data() + size_text->size(), size).ec != std::errc())
                co_return make_error(store_errc::rejected, describe() + prefix + ": a listing entry without key or size");
            if (!key->starts_with(prefix_))
                continue;
            if (auto taken = each({key->substr(prefix_.size()), size}); !taken)
                co_return taken;
        }
        token.reset();
        if (s3::xml_text(xml, "IsTruncated") == "true") {
            token = s3::xml_text(xml, "NextContinuationToken");
            if (!token || token->empty())
                co_return make_error(store_errc::rejected, describe() + prefix + ": a truncated listing without a token");
        }
    } while (token);
    co_return result<void>();
}

awaitable<result<std::unique_ptr<object_writer>>> s3_store::open_writer(std::string key, write_mode mode) {
    co_return std::unique_ptr<object_writer>(std::make_unique<s3_writer>(*this, std::move(key), mode));
}

awaitable<result<void>> s3_store::remove(std::string key) {
    auto request = signed_request("DELETE", key, false, {}, {}, {});
    auto deleted = co_await send(*this, std::move(request), nullptr);
    if (!deleted)
        co_return deleted.error();
    co_return result<void>();
}

} // namespace mirror::store
