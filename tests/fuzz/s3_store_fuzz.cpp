// libFuzzer target: S3's answers read by the real S3 store (core/store/s3_store.hpp, its
// writer and core/s3), through the real HTTP client: a loopback server
// (support/canned_server.hpp) answers each request with the next part of the input, so
// ListObjectsV2 pages, error bodies, upload ids and multipart answers are all hostile.
//
// Input: one byte choosing the call (low 3 bits) and whether parts go up in the
// background (bit 3), then up to eight answers separated by "\n--8<--\n"
// (tests/fuzz/http.dict, s3.dict).
//
// Besides the sanitizers and escaping exceptions: a failure is a store_errc; a listing
// hands on only keys below the prefix asked for, as the store interface promises and the
// sync engine relies on.

#include "core/io/errors.hpp"
#include "core/store/s3_store.hpp"
#include "tests/fuzz/support/canned_server.hpp"
#include "tests/fuzz/support/check.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

using namespace mirror;
using mirror::fuzz::check;
using namespace std::chrono_literals;

namespace {

constexpr std::string_view separator = "\n--8<--\n";

fuzz::canned_server& server() {
    static auto* running = new fuzz::canned_server(); // for the whole run; never destroyed
    return *running;
}

store::s3_store_settings settings_for(bool background_parts) {
    store::s3_store_settings s;
    s.access.creds = {"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", std::nullopt};
    s.access.region = "us-east-1";
    s.access.endpoint = "http://127.0.0.1:" + std::to_string(server().port());
    s.access.path_style = true; // a virtual-hosted bucket would be a name to resolve
    s.allow_plain_http = true;
    s.client.ca_bundle = "/dev/null"; // no TLS here; see http_client_fuzz.cpp
    s.client.connect_timeout = s.client.handshake_timeout = s.client.header_timeout = s.client.body_idle_timeout = 5s;
    s.client.max_attempts = 3;
    s.client.backoff_base = s.client.backoff_cap = 0ms;
    s.client.retry_after_cap = 0s;
    // Tiny parts, so that a few bytes take the multipart path.
    s.multipart_threshold = 16;
    s.part_bytes = 16;
    s.parallel_parts = background_parts ? 2 : 0;
    s.max_page_bytes = 64 * 1024;
    return s;
}

void check_failure(result<void> const& done) {
    if (!done)
        check(done.error().code.category() == io::store_category(), "an S3 failure that is not a store_errc",
              done.error().message);
}

awaitable<void> run(store::s3_store& s3, unsigned mode) {
    using store::write_mode;
    if (mode <= 1) {
        std::string prefix = mode == 0 ? "versions/" : "";
        std::function<result<void>(store::list_entry)> each = [&](store::list_entry entry) -> result<void> {
            check(entry.key.starts_with(prefix), "a listed key outside the prefix asked for", entry.key);
            return {};
        };
        auto listed = co_await s3.list(prefix, each);
        check_failure(listed);
        co_return;
    }
    if (mode == 2) {
        auto info = co_await s3.stat("versions/x/version.json");
        check_failure(info ? result<void>() : result<void>(info.error()));
        co_return;
    }
    if (mode == 3) {
        auto read = co_await store::read_all(s3, "versions/x/version.json", 64 * 1024);
        check_failure(read ? result<void>() : result<void>(read.error()));
        co_return;
    }
    if (mode == 4) {
        check_failure(co_await s3.remove("versions/x/version.json"));
        co_return;
    }
    // 5: one PUT; 6: a multipart upload, committed; 7: one left without a commit (aborted).
    auto writer = co_await s3.open_writer("data/main/t/a.parquet", mode == 5 ? write_mode::create_only
                                                                             : write_mode::replace);
    check(writer.has_value(), "open_writer refused a safe key");
    std::string bytes(mode == 5 ? 10 : 50, 'x');
    auto written = co_await (*writer)->write(std::as_bytes(std::span(bytes.data(), bytes.size())));
    check_failure(written);
    if (written && mode != 7)
        check_failure(co_await (*writer)->commit());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(unsigned char const* data, std::size_t size) {
    if (size == 0)
        return 0;
    unsigned mode = data[0] & 7;
    bool background_parts = (data[0] & 8) != 0;
    server().load(fuzz::canned_server::split(mirror::fuzz::as_text(data + 1, size - 1), separator, 8));

    // The io_context outlives the store, and runs until the abort a writer spawns from its
    // destructor is done (docs/design.md, "The command line's io_context outlives the stores").
    net::io_context io;
    auto opened = store::s3_store::open("s3://bucket/lake/", settings_for(background_parts));
    check(opened.has_value(), "the loopback S3 store is refused");
    net::co_spawn(io, run(**opened, mode), [](std::exception_ptr escaped) {
        if (escaped)
            std::rethrow_exception(escaped); // an exception out of the store is a bug: a crash here
    });
    io.run();
    return 0;
}
