#include "core/store/http_store.hpp"

#include "core/io/errors.hpp"

#include <optional>

namespace mirror::store {

namespace {

/// Passes bytes on and keeps a copy while they fit under a limit.
class keeping_sink final : public io::byte_sink {
public:
    keeping_sink(io::byte_sink& out, std::size_t limit, bool keep) : out_(out), limit_(limit), keeping_(keep) {}
    awaitable<result<void>> write(std::span<std::byte const> bytes) override {
        if (keeping_ && kept_.size() + bytes.size() <= limit_) {
            kept_.append(reinterpret_cast<char const*>(bytes.data()), bytes.size());
        } else if (keeping_) {
            keeping_ = false;
            kept_ = std::string(); // not held while the rest of a large object streams
        }
        co_return co_await out_.write(bytes);
    }
    std::optional<std::string> kept() { return keeping_ ? std::optional(std::move(kept_)) : std::nullopt; }

private:
    io::byte_sink& out_;
    std::size_t limit_;
    bool keeping_;
    std::string kept_;
};

/// Whether rereading `key` may be worth a conditional request: the repository's small
/// changing or rechecked objects (fdl.json, HEAD, refs, a version's records), not data
/// files, which are immutable and read once. Remembering 4,000 data files of 16 KiB cost
/// 64 MiB of memory and saved nothing.
bool worth_remembering(std::string_view key) {
    return key == "fdl.json" || key == "HEAD" || key == "refs.json" || key.starts_with("refs/") ||
           (key.starts_with("versions/") && !key.ends_with(".duckdb"));
}

} // namespace

result<std::unique_ptr<http_store>> http_store::open(std::string_view url, http_store_settings settings) {
    auto base = http::parse_base(url);
    if (!base)
        return base.error();
    if (!base->tls && !settings.allow_plain_http)
        return make_error(io::store_errc::rejected, base->text() +
                                                    ": plain http:// is refused unless allowed explicitly "
                                                    "(--allow-plain-http; in the daemon's configuration, "
                                                    "allow_plain_http: true in the store's entry): nothing would "
                                                    "protect the bytes in transit");
    bool tls = base->tls;
    std::unique_ptr<http_store> opened(new http_store(std::move(*base), std::move(settings)));
    if (auto failure = opened->client_->tls_setup_failure(); failure && tls)
        return *failure; // refused now, not at the first request
    return opened;
}

http_store::http_store(http::location base, http_store_settings settings)
    : base_(std::move(base)), settings_(std::move(settings)),
      client_(std::make_unique<http::client>(settings_.client)) {}

http_store::~http_store() = default;

store_caps http_store::caps() const { return {}; }

std::string http_store::describe() const { return base_.text(); }

awaitable<result<object_info>> http_store::stat(std::string key) {
    if (auto problem = key_problem(key))
        co_return make_error(io::store_errc::rejected, describe() + ": " + *problem);
    http::request head_request{"HEAD", http::key_location(base_, key), {}, {}, true};
    counts_.requests += 1;
    auto answer = co_await client_->fetch(head_request, nullptr);
    if (!answer)
        co_return answer.error();
    if (answer->status >= 300)
        co_return http::status_error(answer->status, answer->where.shown());
    if (!answer->content_length)
        co_return make_error(io::store_errc::rejected,
                             answer->where.shown() + ": no Content-Length in the answer to HEAD");
    co_return object_info{*answer->content_length};
}

awaitable<result<void>> http_store::read(std::string key, io::byte_sink& out) {
    if (auto problem = key_problem(key))
        co_return make_error(io::store_errc::rejected, describe() + ": " + *problem);
    http::request get{"GET", http::key_location(base_, key), {}, {}, true};
    std::optional<std::string> sent; // the validator asked with
    if (auto known = remembered_.find(key); known != remembered_.end()) {
        get.headers.emplace_back(known->second.validator_header, known->second.validator);
        sent = known->second.validator;
    }
    keeping_sink keeping(out, settings_.remembered_object_bytes, worth_remembering(key));
    counts_.requests += 1;
    auto answer = co_await client_->fetch(get, &keeping);
    if (!answer)
        co_return answer.error();
    if (answer->status == 304 && sent) {
        // Found again and copied: another read of the same key may replace or drop the
        // entry while this one waits on the network, or on `out`.
        auto known = remembered_.find(key);
        if (known == remembered_.end() || known->second.validator != *sent)
            co_return make_error(io::store_errc::transient,
                                 answer->where.shown() + ": the remembered copy changed during the read");
        counts_.not_modified += 1;
        std::string bytes = known->second.bytes;
        co_return co_await out.write(std::as_bytes(std::span(bytes.data(), bytes.size())));
    }
    if (answer->status >= 300)
        co_return http::status_error(answer->status, answer->where.shown());
    // A 200 replaces what was remembered, even when nothing new can be (too large, no
    // validator): old bytes must never outlive the answer that superseded them.
    forget(key);
    if (auto kept = keeping.kept())
        remember(key, *answer, std::move(*kept));
    co_return result<void>();
}

void http_store::remember(std::string const& key, http::response_head const& head, std::string bytes) {
    remembered_entry entry;
    if (auto etag = head.header("etag")) {
        entry.validator_header = "If-None-Match";
        entry.validator = *etag;
    } else if (auto modified = head.header("last-modified")) {
        entry.validator_header = "If-Modified-Since";
        entry.validator = *modified;
    } else {
        return;
    }
    entry.bytes = std::move(bytes);
    keep(key, std::move(entry));
}

void http_store::keep(std::string key, remembered_entry entry) {
    forget(key);
    if (remembered_bytes_ + entry.bytes.size() > settings_.remembered_total_bytes)
        return; // full: later objects are read unconditionally
    remembered_bytes_ += entry.bytes.size();
    remembered_.emplace(std::move(key), std::move(entry));
}

void http_store::forget(std::string const& key) {
    if (auto old = remembered_.find(key); old != remembered_.end()) {
        remembered_bytes_ -= old->second.bytes.size();
        remembered_.erase(old);
    }
}

std::vector<remembered_object> http_store::remembered_objects() const {
    std::vector<remembered_object> out;
    out.reserve(remembered_.size());
    for (auto const& [key, entry] : remembered_)
        out.push_back({key, entry.validator_header, entry.validator, entry.bytes});
    return out;
}

/// Whether `value` can be sent as a header value as it is: visible ASCII, spaces and tabs
/// (RFC 9110, section 5.5; obs-text aside). A CR or LF would end the header early.
static bool is_plain_header_value(std::string_view value) {
    if (value.empty())
        return false;
    for (char c : value)
        if (!(c == ' ' || c == '\t' || (c > ' ' && c < 0x7f)))
            return false;
    return true;
}

void http_store::restore(std::vector<remembered_object> objects) {
    for (auto& object : objects) {
        bool header_known =
            object.validator_header == "If-None-Match" || object.validator_header == "If-Modified-Since";
        if (key_problem(object.key) || !worth_remembering(object.key) || !header_known ||
            !is_plain_header_value(object.validator) || object.bytes.size() > settings_.remembered_object_bytes ||
            remembered_.contains(object.key))
            continue;
        keep(std::move(object.key), remembered_entry{std::move(object.validator_header), std::move(object.validator),
                                               std::move(object.bytes)});
    }
}

} // namespace mirror::store
