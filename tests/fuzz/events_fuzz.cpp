// libFuzzer target: what the events' listener reads from the network (daemon/events/): an S3
// notification's body, and a webhook's timestamp and signature headers with its body.
// Besides the sanitizers, it checks what the readers promise: a notification read has at
// most 1000 records, and its repositories are among those configured, each once; a webhook
// is accepted only with the very signature its timestamp and body call for.
//
// Input: the first line is the timestamp header, the second the signature header, the rest
// the body (also read as a notification).

#include "daemon/events/event_auth.hpp"
#include "daemon/events/s3_events.hpp"
#include "tests/fuzz/support/check.hpp"

#include <algorithm>

using namespace mirror;
using mirror::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(unsigned char const* data, std::size_t size) {
    auto const text = fuzz::as_text(data, size);
    auto first = text.find('\n');
    auto second = first == std::string_view::npos ? first : text.find('\n', first + 1);
    std::string_view timestamp = text.substr(0, first);
    std::string_view signature = first == std::string_view::npos ? "" : text.substr(first + 1, second - first - 1);
    std::string_view body = second == std::string_view::npos ? text : text.substr(second + 1);

    std::string why;
    if (auto records = daemon::parse_s3_events(body, why)) {
        check(records->size() <= 1000, "more than 1000 records read");
        std::vector<daemon::s3_origin> origins{*daemon::s3_origin_of("a", "s3://origins/a/"),
                                               *daemon::s3_origin_of("b", "s3://origins")};
        std::size_t ignored = 0;
        auto named = daemon::repositories_announced(*records, origins, ignored);
        check(named.size() <= 2 && ignored <= records->size(), "more repositories or ignored records than there are");
        for (auto const& name : named)
            check(name == "a" || name == "b", "a repository not configured", name);
        for (auto const& record : *records)
            (void)daemon::announces_change(record.key);
    } else {
        check(!why.empty(), "a notification refused without a reason");
    }

    constexpr std::int64_t now = 1796500000;
    std::string const secret = "fuzz-secret-0123456789";
    std::string_view const path = "/hooks/a";
    auto checked = daemon::check_webhook(secret, timestamp, signature, path, body, now, std::chrono::seconds(300));
    if (!checked.refused)
        check(daemon::webhook_signature(secret, timestamp, path, body) == signature,
              "a webhook accepted with another signature than its own");
    return 0;
}
