// libFuzzer target: HTTP answers read by the real client (core/http/client.hpp) and the
// HTTP origin store on top of it (core/store/http_store.hpp). The input is what a server
// sends: a loopback server (support/canned_server.hpp) answers each connection with the
// next part of the input, so the client's parser, body streaming, keep-alive pool,
// retries, resumed reads and the store's conditional reads all see hostile bytes.
//
// Input: one byte choosing the call (low 3 bits) and whether connections are pooled (bit
// 3), then up to six answers separated by "\n--8<--\n" (tests/fuzz/http.dict).
//
// Besides the sanitizers and escaping exceptions: every exchange is told to the observer
// once; a failure is a store_errc naming the URL; a 2xx body read by exchange is exactly
// its Content-Length; the kept start of an error body stays within 16 KiB.

#include "core/http/client.hpp"
#include "core/io/errors.hpp"
#include "core/store/http_store.hpp"
#include "tests/fuzz/support/canned_server.hpp"
#include "tests/fuzz/support/check.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

using namespace mirror;
using mirror::fuzz::check;
using namespace std::chrono_literals;

namespace {

constexpr std::string_view separator = "\n--8<--\n";

/// Counts what reaches the caller; refuses past `limit` bytes, as a caller whose size
/// check fails does.
class test_sink final : public io::byte_sink {
public:
    explicit test_sink(std::size_t limit) : limit_(limit) {}
    awaitable<result<void>> write(std::span<std::byte const> bytes) override {
        check(!bytes.empty(), "an empty write to a sink");
        if (received + bytes.size() > limit_)
            co_return make_error(io::store_errc::too_large, "test sink: over its limit");
        received += bytes.size();
        co_return result<void>();
    }
    std::uint64_t received = 0;

private:
    std::size_t limit_;
};

class counting_observer final : public io::request_observer {
public:
    void observe(io::request_event const& event) override {
        ++events;
        check(event.status == 0 || (event.status >= 100 && event.status <= 599), "an observed status out of range");
    }
    int events = 0;
};

fuzz::canned_server& server() {
    static auto* running = new fuzz::canned_server(); // for the whole run; never destroyed
    return *running;
}

http::client_settings settings_for(bool pooled, std::shared_ptr<counting_observer> observer) {
    http::client_settings s;
    // No TLS here: an unreadable bundle keeps each client's setup cheap (the system roots
    // take milliseconds to load). Deadlines are short but never the normal end: the
    // server always closes after its answer.
    s.ca_bundle = "/dev/null";
    s.connect_timeout = s.handshake_timeout = s.header_timeout = s.body_idle_timeout = 5s;
    s.max_idle_per_host = pooled ? 8 : 0;
    s.max_attempts = 3;
    s.backoff_base = 0ms;
    s.backoff_cap = 0ms;
    s.retry_after_cap = 0s;
    s.observer = std::move(observer);
    return s;
}

/// True when no answer could redirect to another host: a redirect is followed by name,
/// and resolving names of the fuzzer's choice would leave the machine. Relative redirects
/// and ones back to the loopback server are followed.
bool stays_local(std::vector<std::string> const& answers, std::string const& origin) {
    for (auto answer : answers) {
        for (auto at = answer.find(origin); at != std::string::npos; at = answer.find(origin))
            answer.erase(at, origin.size());
        if (answer.find("//") != std::string::npos)
            return false;
    }
    return true;
}

/// A failure names the request's URL (after redirects: one on the same server).
void check_failure(error const& e, std::string const& origin) {
    check(e.code.category() == io::store_category(), "a client failure that is not a store_errc", e.message);
    check(e.message.starts_with(origin + "/") || e.message.starts_with("test sink"),
          "a failure that does not name the URL", e.message);
}

/// "http://127.0.0.1:PORT" of a URL below it.
std::string origin_of(std::string const& url) { return url.substr(0, url.find('/', std::string("http://").size())); }

void check_head(http::response_head const& head) {
    check(head.status >= 100 && head.status <= 599, "a status out of range");
    check(head.error_body.size() <= 16 * 1024, "more than 16 KiB of an error body kept");
}

awaitable<void> run_client(unsigned mode, bool pooled, bool redirects, std::string url) {
    auto observer = std::make_shared<counting_observer>();
    http::client client(settings_for(pooled, observer));
    http::request req;
    req.where = *http::parse_location(url);
    req.follow_redirects = redirects;
    test_sink sink(mode == 4 ? 100 : 64 * 1024 * 1024);
    if (mode <= 2) {
        req.method = mode == 1 ? "HEAD" : mode == 2 ? "PUT" : "GET";
        if (mode == 2)
            req.body = "a body for the server to ignore";
        auto answer = co_await client.exchange(req, &sink);
        check(observer->events == 1, "an exchange not told to the observer exactly once");
        if (!answer) {
            check_failure(answer.error(), origin_of(url));
            co_return;
        }
        check_head(*answer);
        bool body_read = answer->status >= 200 && answer->status < 300 && req.method != "HEAD";
        if (body_read && answer->content_length)
            check(sink.received == *answer->content_length, "a body that is not its Content-Length");
        if (!body_read)
            check(sink.received == 0, "a body delivered for an answer that has none");
        co_return;
    }
    req.method = mode == 7 ? "HEAD" : "GET";
    auto answer = co_await client.fetch(req, &sink);
    // One event per try and per redirect (3 tries, 5 redirects).
    check(observer->events >= 1 && observer->events <= 3 + 5, "fetch told the observer of too many exchanges");
    if (answer)
        check_head(*answer);
    else
        check_failure(answer.error(), origin_of(url));
}

/// The origin store on top: stat, or a read followed by a conditional one.
awaitable<void> run_store(unsigned mode, bool pooled, std::string url) {
    store::http_store_settings s;
    s.client = settings_for(pooled, std::make_shared<counting_observer>());
    s.allow_plain_http = true;
    auto opened = store::http_store::open(url, s);
    check(opened.has_value(), "the loopback origin is refused");
    auto& origin = **opened;
    if (mode == 5) {
        auto info = co_await origin.stat("refs.json");
        if (!info)
            check(info.error().code.category() == io::store_category(), "stat failed with another category");
        co_return;
    }
    for (int round = 0; round < 2; ++round) {
        test_sink sink(64 * 1024 * 1024);
        auto read = co_await origin.read("refs.json", sink);
        if (!read)
            check(read.error().code.category() == io::store_category(), "read failed with another category");
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(unsigned char const* data, std::size_t size) {
    if (size == 0)
        return 0;
    unsigned mode = data[0] & 7;
    bool pooled = (data[0] & 8) != 0;
    auto answers = fuzz::canned_server::split(mirror::fuzz::as_text(data + 1, size - 1), separator, 6);
    std::string origin = "http://127.0.0.1:" + std::to_string(server().port());
    bool redirects = stays_local(answers, origin);
    bool store_mode = mode == 5 || mode == 6;
    if (store_mode && !redirects)
        return 0; // the store always follows redirects
    server().load(std::move(answers));

    net::io_context io;
    auto run = store_mode ? run_store(mode, pooled, origin + "/repo/")
                          : run_client(mode, pooled, redirects, origin + "/repo/refs.json");
    net::co_spawn(io, std::move(run), [](std::exception_ptr escaped) {
        if (escaped)
            std::rethrow_exception(escaped); // an exception out of the client is a bug: a crash here
    });
    io.run();
    return 0;
}
