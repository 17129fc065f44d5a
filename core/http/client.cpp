#include "core/http/client.hpp"

#include "core/http/detail/exchange.hpp"
#include "core/http/redirects.hpp"
#include "core/http/status.hpp"
#include "core/http/tcp_options.hpp"
#include "core/http/tls_roots.hpp"
#include "core/io/errors.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <random>
#include <utility>

namespace mirror::http {

namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using io::request_failure;
using namespace net::experimental::awaitable_operators;

std::optional<std::string> response_head::header(std::string_view lower_case_name) const {
    for (auto const& [name, value] : headers)
        if (name == lower_case_name)
            return value;
    return std::nullopt;
}

namespace {

using detail::connection;
using detail::exchange_outcome;
using detail::transport_error;

/// What an answer's status asks for: 408 is the server's timeout, 429 and S3's SlowDown
/// (a 503) say slow down, other 5xx a failure of the server. Other statuses are answers.
io::request_failure failure_of(response_head const& head) {
    if (head.status == 408)
        return io::request_failure::timeout;
    if (head.status == 429 ||
        (head.status == 503 && head.error_body.find("<Code>SlowDown</Code>") != std::string::npos))
        return io::request_failure::throttled;
    if (head.status >= 500 && head.status < 600 && head.status != 501)
        return io::request_failure::server_error;
    return io::request_failure::none;
}

/// "localhost" or a name below it, in any case, with or without the final dot.
bool is_localhost_name(std::string_view host) {
    if (host.ends_with('.'))
        host.remove_suffix(1);
    auto lower = [](std::string_view s) {
        std::string out(s);
        for (char& c : out)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return out;
    };
    std::string const name = lower(host);
    return name == "localhost" || name.ends_with(".localhost");
}

/// Connections are pooled per scheme, host and port, and apart when they were opened to
/// public addresses only: one opened without that check never serves a request needing it.
std::string pool_key_of(location const& where, bool public_only) {
    return where.scheme() + "://" + where.host + ":" + where.port + (public_only ? " public" : "");
}


/// Counts what reaches the caller's sink, so that a cut-off body can be resumed, and
/// keeps the sink's own refusal apart from the network's failures: the caller's sink
/// said stop, so the read stops, whatever kind of error it gave (never retried).
class counting_sink final : public io::byte_sink {
public:
    explicit counting_sink(io::byte_sink* out) : out_(out) {}
    awaitable<result<void>> write(std::span<std::byte const> bytes) override {
        auto written = co_await out_->write(bytes);
        if (written)
            delivered_ += bytes.size();
        else if (!refusal_)
            refusal_ = written.error();
        co_return written;
    }
    std::uint64_t delivered() const { return delivered_; }
    std::optional<error> const& refusal() const { return refusal_; }

private:
    io::byte_sink* out_;
    std::uint64_t delivered_ = 0;
    std::optional<error> refusal_;
};

/// "bytes N-M/T" -> N.
std::optional<std::uint64_t> range_start(std::string_view content_range) {
    if (!content_range.starts_with("bytes "))
        return std::nullopt;
    content_range.remove_prefix(6);
    std::uint64_t start = 0;
    auto [end, ec] = std::from_chars(content_range.data(), content_range.data() + content_range.size(), start);
    if (ec != std::errc() || end == content_range.data() + content_range.size() || *end != '-')
        return std::nullopt;
    return start;
}

/// A final answer of status 300 or more, as an error: the status's class, with an S3-style
/// <Code> (SlowDown, InternalError), which says more than the status and survives into
/// the message when the retries run out; transient where the protocol says so (S3's 400s).
error failure_of(response_head const& answer, std::string const& where, client_settings const& settings) {
    auto failure = status_error(answer.status, where);
    if (auto code_at = answer.error_body.find("<Code>"); code_at != std::string::npos) {
        auto end = answer.error_body.find("</Code>", code_at);
        if (end != std::string::npos && end - code_at - 6 <= 64)
            failure.message += " " + answer.error_body.substr(code_at + 6, end - code_at - 6);
    }
    if (settings.transient_answer && settings.transient_answer(answer.status, answer.error_body))
        failure.code = io::store_errc::transient;
    return failure;
}

/// How long an answer's Retry-After (in seconds) asks to wait, within `cap`.
std::optional<std::chrono::milliseconds> retry_after(response_head const& answer, std::chrono::seconds cap) {
    auto after = answer.header("retry-after");
    if (!after)
        return std::nullopt;
    std::uint64_t seconds = 0;
    auto [end, ec] = std::from_chars(after->data(), after->data() + after->size(), seconds);
    if (ec != std::errc() || end != after->data() + after->size())
        return std::nullopt;
    return std::chrono::seconds(std::min<std::uint64_t>(seconds, static_cast<std::uint64_t>(cap.count())));
}

/// The redirects of one fetch: each is resolved against the request's location and judged
/// against where the fetch started (redirects.hpp); past max_redirects, refused.
class redirect_chain {
public:
    explicit redirect_chain(location start) : start_(std::move(start)) {}

    /// Points `req` at the answer's Location, or says why not.
    result<void> follow(request& req, response_head const& answer, client_settings const& settings) {
        auto target = answer.header("location");
        if (!target)
            return make_error(io::store_errc::rejected,
                              req.where.shown() + ": HTTP " + std::to_string(answer.status) + " without a Location");
        auto next = resolve_redirect(req.where, *target);
        if (!next)
            return next.error();
        if (count_ == 0)
            start_internal_ = answer.internal_peer; // whether the origin answered from an internal address
        auto verdict = decide_redirect(start_, start_internal_, *next, settings.redirect_hosts);
        if (!verdict.follow)
            return make_error(io::store_errc::rejected, verdict.why);
        req.public_addresses_only = verdict.public_addresses_only;
        if (++count_ > settings.max_redirects)
            return make_error(io::store_errc::rejected, req.where.shown() + ": more than " +
                                                            std::to_string(settings.max_redirects) + " redirects");
        req.where = std::move(*next);
        return {};
    }

private:
    location const start_;
    bool start_internal_ = false;
    unsigned count_ = 0;
};

} // namespace

struct client::impl {
    client_settings settings;
    ssl::context tls{ssl::context::tls_client};
    std::optional<error> tls_setup_failure;
    std::map<std::string, std::vector<std::unique_ptr<connection>>> idle;
    std::mt19937_64 random{std::random_device{}()};

    explicit impl(client_settings s) : settings(std::move(s)) {
        boost::system::error_code ec;
        SSL_CTX_set_min_proto_version(tls.native_handle(), TLS1_2_VERSION);
        tls.set_verify_mode(ssl::verify_peer, ec);
        load_roots(tls, settings.ca_bundle, ec);
        if (ec)
            tls_setup_failure = make_error(io::store_errc::rejected,
                                           "TLS roots" +
                                               (settings.ca_bundle ? " from " + settings.ca_bundle->string() : "") +
                                               " cannot be loaded: " + ec.message());
    }

    /// A new connection to `where`; says in `failure` why there is none.
    awaitable<result<std::unique_ptr<connection>>> connect(location const& where, bool public_only,
                                                           io::request_failure& failure) {
        auto ex = co_await net::this_coro::executor;
        auto c = std::make_unique<connection>();
        c->pool_key = pool_key_of(where, public_only);
        std::string what = where.shown();
        if (where.tls) {
            if (tls_setup_failure) {
                failure = io::request_failure::tls;
                co_return *tls_setup_failure;
            }
            c->secure.emplace(ex, tls);
        } else {
            c->plain.emplace(ex);
        }
        // Resolving has no deadline of its own: race it against a timer. A name under
        // "localhost." is the loopback (RFC 6761, 6.3), as the system names "localhost"
        // itself, whatever DNS would say: S3 servers on loopback are reached virtual-hosted
        // as BUCKET.localhost.
        tcp::resolver resolver(ex);
        net::steady_timer timer(ex, settings.connect_timeout);
        auto resolving =
            resolver.async_resolve(is_localhost_name(where.host) ? "localhost" : where.host, where.port, use_op);
        auto waiting = timer.async_wait(use_op);
        auto raced = co_await (std::move(resolving) || std::move(waiting));
        if (raced.index() == 1) {
            failure = io::request_failure::timeout;
            co_return make_error(io::store_errc::transient, what + ": timed out while resolving " + where.host);
        }
        auto [resolve_ec, resolved] = std::get<0>(raced);
        if (resolve_ec)
            co_return transport_error(what, "resolving " + where.host, resolve_ec, io::request_failure::dns, failure);
        // The addresses are checked as resolved, not the name: a public name can resolve inward.
        std::vector<tcp::endpoint> endpoints;
        for (auto const& entry : resolved)
            if (!public_only || !is_internal_address(entry.endpoint().address()))
                endpoints.push_back(entry.endpoint());
        if (endpoints.empty()) {
            failure = io::request_failure::connect;
            co_return make_error(io::store_errc::rejected,
                                 what + ": " + where.host + " resolves only to internal addresses (" +
                                     resolved.begin()->endpoint().address().to_string() +
                                     "…), which a redirect from a public origin may not reach");
        }

        c->lowest().expires_after(settings.connect_timeout);
        auto [connect_ec, endpoint] = co_await c->lowest().async_connect(endpoints, use_op);
        if (connect_ec)
            co_return transport_error(what, "connecting", connect_ec, io::request_failure::connect, failure);
        send_at_once(c->lowest().socket().native_handle());
        if (!where.tls)
            co_return c;

        boost::system::error_code ip_ec;
        net::ip::make_address(where.host, ip_ec);
        if (ip_ec && !SSL_set_tlsext_host_name(c->secure->native_handle(), where.host.c_str())) {
            failure = io::request_failure::tls;
            co_return make_error(io::store_errc::rejected, what + ": cannot set the TLS server name");
        }
        // OpenSSL's own check of the name (RFC 6125), rather than a verify callback: a
        // mismatch is then reported as one, not as an unspecified error.
        X509_VERIFY_PARAM* param = SSL_get0_param(c->secure->native_handle());
        X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        bool named = ip_ec ? X509_VERIFY_PARAM_set1_host(param, where.host.c_str(), where.host.size()) == 1
                           : X509_VERIFY_PARAM_set1_ip_asc(param, where.host.c_str()) == 1;
        if (!named) {
            failure = io::request_failure::tls;
            co_return make_error(io::store_errc::rejected, what + ": cannot ask TLS to check the host name");
        }
        c->lowest().expires_after(settings.handshake_timeout);
        auto [handshake_ec] = co_await c->secure->async_handshake(ssl::stream_base::client, use_op);
        if (handshake_ec) {
            long verified = SSL_get_verify_result(c->secure->native_handle());
            if (verified != X509_V_OK) {
                failure = io::request_failure::tls;
                bool other_host = verified == X509_V_ERR_HOSTNAME_MISMATCH || verified == X509_V_ERR_IP_ADDRESS_MISMATCH;
                co_return make_error(io::store_errc::rejected,
                                     what + ": the TLS certificate does not verify (" +
                                         (other_host ? std::string("it is not for the host asked for: ") : "") +
                                         X509_verify_cert_error_string(verified) + ")");
            }
            co_return transport_error(what, "the TLS handshake", handshake_ec, io::request_failure::tls, failure);
        }
        co_return c;
    }

    /// A kept connection to `key` that runs on `ex` (one from another io_context is dropped).
    std::unique_ptr<connection> take_idle(std::string const& key, net::any_io_executor const& ex) {
        auto it = idle.find(key);
        while (it != idle.end() && !it->second.empty()) {
            auto c = std::move(it->second.back());
            it->second.pop_back();
            if (c->lowest().get_executor() == ex)
                return c;
        }
        return nullptr;
    }

    void give_back(std::unique_ptr<connection> c) {
        auto& list = idle[c->pool_key];
        if (list.size() < settings.max_idle_per_host)
            list.push_back(std::move(c));
    }

    std::chrono::milliseconds backoff(unsigned attempt) {
        auto ceiling = std::min<std::int64_t>(settings.backoff_cap.count(),
                                              settings.backoff_base.count() << std::min(attempt, 20u));
        std::uniform_int_distribution<std::int64_t> pick(0, std::max<std::int64_t>(ceiling, 0));
        return std::chrono::milliseconds(pick(random));
    }
};

client::client(client_settings settings) : impl_(std::make_unique<impl>(std::move(settings))) {}
client::~client() = default;

std::optional<error> client::tls_setup_failure() const { return impl_->tls_setup_failure; }

client_settings const& client::settings() const { return impl_->settings; }

awaitable<result<response_head>> client::exchange(request const& req, io::byte_sink* body,
                                                  response_head* seen) {
    std::string key = pool_key_of(req.where, req.public_addresses_only);
    // A pooled connection may have been closed by the server meanwhile: if it fails before
    // any answer, the request goes once more on a new connection.
    auto ex = co_await net::this_coro::executor;
    auto* observer = impl_->settings.observer.get();
    auto told = [&](exchange_outcome const& outcome) {
        if (observer != nullptr)
            observer->observe({req.method, outcome.status, outcome.failure});
    };
    for (int round = 0; round < 2; ++round) {
        auto c = round == 0 ? impl_->take_idle(key, ex) : nullptr;
        bool reused = c != nullptr;
        exchange_outcome outcome;
        if (!c) {
            auto opened = co_await impl_->connect(req.where, req.public_addresses_only, outcome.failure);
            if (!opened) {
                told(outcome);
                co_return opened.error();
            }
            c = std::move(*opened);
        }
        std::optional<result<response_head>> answer;
        answer.emplace(co_await detail::run_exchange(*c, impl_->settings, req, body, outcome, seen));
        if (!*answer && reused && outcome.status == 0)
            continue;
        if (*answer) {
            boost::system::error_code peer_ec;
            auto peer = c->lowest().socket().remote_endpoint(peer_ec);
            (*answer)->internal_peer = !peer_ec && is_internal_address(peer.address());
            outcome.failure = failure_of(**answer);
            if (outcome.reusable)
                impl_->give_back(std::move(c));
        }
        told(outcome);
        co_return std::move(*answer);
    }
    told({false, 0, io::request_failure::reset});
    co_return make_error(io::store_errc::transient, req.where.shown() + ": no connection");
}

awaitable<result<response_head>> client::fetch(request req, io::byte_sink* body) {
    auto ex = co_await net::this_coro::executor;
    counting_sink counted(body);
    io::byte_sink* sink = body != nullptr ? &counted : nullptr;
    std::optional<std::string> etag; // of the body being streamed, for resuming it
    redirect_chain redirects(req.where);
    std::optional<error> last;
    for (unsigned attempt = 0; attempt < impl_->settings.max_attempts;) {
        std::uint64_t resume_from = counted.delivered();
        // A resumed read adds two headers; the request (and its body, a part of up to
        // 16 MiB for S3) is otherwise sent as it is, not copied.
        std::optional<request> resumed;
        if (resume_from > 0) {
            resumed = req;
            resumed->headers.emplace_back("Range", "bytes=" + std::to_string(resume_from) + "-");
            resumed->headers.emplace_back("If-Range", *etag);
        }
        request const& sent = resumed ? *resumed : req;
        response_head seen;
        auto answer = co_await exchange(sent, sink, &seen);
        if (counted.refusal())
            co_return *counted.refusal(); // the caller's sink stopped the read: not the network's doing
        if (!answer && resume_from > 0 && seen.status == 206 && seen.header("etag") != etag)
            co_return answer.error(); // the rest is of other bytes: the read starts again, whole, later
        std::optional<std::chrono::milliseconds> wait;
        if (answer) {
            auto const status = answer->status;
            if (is_redirect(status) && req.follow_redirects) {
                if (auto followed = redirects.follow(req, *answer, impl_->settings); !followed)
                    co_return followed.error();
                continue;
            }
            if (resume_from > 0 && status == 200)
                co_return make_error(io::store_errc::transient,
                                     req.where.shown() + ": changed while it was read (its ETag no longer matches)");
            if (resume_from > 0 && status == 206) {
                auto start = answer->header("content-range");
                if (!start || range_start(*start) != resume_from)
                    co_return make_error(io::store_errc::rejected,
                                         req.where.shown() + ": a resumed read came back from the wrong offset");
                answer->status = 200;
            }
            if (status < 300 || status == 304)
                co_return answer;
            auto failure = failure_of(*answer, req.where.shown(), impl_->settings);
            if (!io::is_retryable(failure.code))
                co_return answer; // final: the caller judges it (S3 reads its error body)
            wait = retry_after(*answer, impl_->settings.retry_after_cap);
            last = std::move(failure);
        } else {
            if (!io::is_retryable(answer.error().code))
                co_return answer.error();
            last = answer.error();
        }
        // A body cut off after some bytes resumes only when it can be pinned to a strong
        // ETag (a weak one may name other bytes).
        if (counted.delivered() > 0) {
            if (resume_from == 0)
                etag = seen.header("etag");
            if (!etag || etag->starts_with("W/"))
                co_return *last;
        }
        ++attempt;
        if (attempt >= impl_->settings.max_attempts)
            break;
        net::steady_timer timer(ex, wait.value_or(impl_->backoff(attempt - 1)));
        co_await timer.async_wait(use_op);
    }
    last->message += " (after " + std::to_string(impl_->settings.max_attempts) + " attempts)";
    co_return *last;
}

} // namespace mirror::http
