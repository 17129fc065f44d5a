// Passes driven by events (daemon/events/): the webhooks' signatures and their window, the
// replay guard, S3 event records read and mapped to repositories, and the receiver's
// answers and counts.

#include "daemon/events/event_auth.hpp"
#include "daemon/events/event_receiver.hpp"
#include "daemon/events/s3_events.hpp"
#include "tests/daemon/captured_log.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace mirror;
using namespace mirror::daemon;
using namespace std::chrono_literals;

namespace {

constexpr std::int64_t now = 1796500000;
std::string const secret = "0123456789abcdef-population";

bool has_line(std::string const& text, std::string const& line) {
    return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

} // namespace

TEST_CASE("webhook: the HMAC-SHA256 of timestamp.path.body, as openssl computes it") {
    // printf '1796500000./hooks/population.{"ref":"main"}' | openssl dgst -sha256 -hmac 0123456789abcdef-population
    CHECK(webhook_signature(secret, "1796500000", "/hooks/population", R"({"ref":"main"})") ==
          "sha256=43f30dd9d9cd3a0555e6331b3150197ef4f441c3ca568f85632a2239d30a8117");
    auto const good = webhook_signature(secret, "1796500000", "/hooks/population", "{}");
    CHECK(good.starts_with("sha256="));
    CHECK(good.size() == 7 + 64);
    CHECK(webhook_signature(secret, "1796500001", "/hooks/population", "{}") != good);  // the time is signed
    CHECK(webhook_signature(secret, "1796500000", "/hooks/population", "{ }") != good); // and the body
    CHECK(webhook_signature(secret, "1796500000", "/hooks/other", "{}") != good);       // and the repository
    CHECK(webhook_signature(secret + "x", "1796500000", "/hooks/population", "{}") != good);
}

TEST_CASE("webhook: a good signature within the window passes, and each fault has its reason") {
    auto const body = std::string(R"({"ref":"refs/heads/main"})");
    auto const ts = std::to_string(now);
    std::string const path = "/hooks/population";
    auto const sig = webhook_signature(secret, ts, path, body);
    auto check = [&](std::string const& key, std::string const& timestamp, std::string const& signature,
                     std::string const& at, std::string const& sent, std::int64_t when) {
        return check_webhook(key, timestamp, signature, at, sent, when, 300s).refused;
    };
    CHECK_FALSE(check(secret, ts, sig, path, body, now).has_value());
    CHECK(check_webhook(secret, ts, sig, path, body, now, 300s).sent == now);
    CHECK_FALSE(check(secret, ts, sig, path, body, now + 300).has_value()); // the window's edge
    CHECK(check(secret, ts, "", path, body, now) == event_refusal::missing_signature);
    CHECK(check(secret, "", sig, path, body, now) == event_refusal::missing_timestamp);
    CHECK(check(secret, "yesterday", sig, path, body, now) == event_refusal::missing_timestamp);
    CHECK(check(secret, ts, sig, path, body + " ", now) == event_refusal::bad_signature);
    CHECK(check(secret, ts, sig, "/hooks/another", body, now) == event_refusal::bad_signature); // sent elsewhere
    CHECK(check("another secret of 16+", ts, sig, path, body, now) == event_refusal::bad_signature);
    CHECK(check(secret, ts, "sha256=" + std::string(64, '0'), path, body, now) == event_refusal::bad_signature);
    CHECK(check(secret, ts, sig.substr(7), path, body, now) == event_refusal::bad_signature); // no "sha256="
    CHECK(check(secret, ts, sig, path, body, now + 301) == event_refusal::stale_timestamp);
    CHECK(check(secret, ts, sig, path, body, now - 301) == event_refusal::stale_timestamp); // from the future
    // A captured request sent again with a fresh time fails its signature, not the window.
    auto const later = std::to_string(now + 3600);
    CHECK(check(secret, later, sig, path, body, now + 3600) == event_refusal::bad_signature);
}

TEST_CASE("replay guard: a signature is accepted once within its window, and the guard stays bounded") {
    replay_guard guard(3);
    CHECK(guard.first_sight("a", now + 300, now));
    CHECK_FALSE(guard.first_sight("a", now + 300, now + 10));
    CHECK(guard.first_sight("b", now + 300, now));
    CHECK(guard.first_sight("c", now + 300, now));
    CHECK_FALSE(guard.first_sight("d", now + 300, now)); // full, none expired: refused, none forgotten
    CHECK_FALSE(guard.first_sight("a", now + 600, now + 299));
    CHECK(guard.first_sight("d", now + 700, now + 301)); // a, b and c expired
    CHECK(guard.first_sight("a", now + 700, now + 301)); // out of its window: the MAC check refuses it anyway
}

TEST_CASE("s3 events: RGW's and AWS's records are read, keys decoded by their source") {
    std::string why;
    auto rgw = parse_s3_events(
        R"({"Records":[{"eventVersion":"2.2","eventSource":"ceph:s3","eventName":"ObjectCreated:Put",
            "s3":{"bucket":{"name":"origins"},"object":{"key":"repo/refs/tags/a+b c","size":6}},"opaqueData":""}]})",
        why);
    REQUIRE(rgw.has_value());
    REQUIRE(rgw->size() == 1);
    CHECK(rgw->front().event_name == "ObjectCreated:Put");
    CHECK(rgw->front().bucket == "origins");
    CHECK(rgw->front().key == "repo/refs/tags/a+b c"); // RGW sends keys as they are
    auto aws = parse_s3_events(
        R"({"Records":[{"eventSource":"aws:s3","eventName":"ObjectRemoved:Delete",
            "s3":{"bucket":{"name":"b"},"object":{"key":"p/refs/tags/v1%2Brc+1"}}}]})",
        why);
    REQUIRE(aws.has_value());
    CHECK(aws->front().key == "p/refs/tags/v1+rc 1"); // AWS form-URL-encodes them
    auto test_event = parse_s3_events(R"({"Service":"Amazon S3","Event":"s3:TestEvent","Bucket":"b"})", why);
    REQUIRE(test_event.has_value());
    CHECK(test_event->empty());
    for (auto bad : {"not json", "[]", R"({"Records":{}})", R"({"Records":[{"eventName":"x"}]})",
                     R"({"Records":[{"eventName":"x","s3":{"bucket":{"name":"b"},"object":{"key":7}}}]})"}) {
        CAPTURE(bad);
        CHECK_FALSE(parse_s3_events(bad, why).has_value());
        CHECK_FALSE(why.empty());
    }
}

TEST_CASE("s3 events: only refs, refs.json, HEAD, signatures and expiry announce a change") {
    for (auto key : {"HEAD", "refs.json", "refs/heads/main", "refs/tags/v1", "versions/0190/version.json.sig",
                     "versions/0190/expired.json"})
        CHECK_MESSAGE(announces_change(key), key);
    for (auto key : {"fdl.json", "refs/", "versions/0190/version.json", "versions/0190/files.json",
                     "versions//expired.json", "data/main/t/a.parquet", ".fdl-mirror/lease", "HEAD.tmp"})
        CHECK_MESSAGE(!announces_change(key), key);
}

TEST_CASE("s3 events: a record maps to the repositories whose origin holds its key") {
    std::vector<s3_origin> origins{*s3_origin_of("a", "s3://origins/a/"), *s3_origin_of("b", "s3://origins/b"),
                                   *s3_origin_of("whole", "s3://other")};
    CHECK(origins[1].prefix == "b/");
    CHECK(origins[2].prefix.empty());
    CHECK_FALSE(s3_origin_of("x", "https://host/").has_value());
    std::size_t ignored = 0;
    std::vector<s3_event_record> records{{"ObjectCreated:Put", "origins", "a/refs/heads/main"},
                                         {"ObjectCreated:Put", "origins", "a/data/x.parquet"},
                                         {"ObjectRemoved:Delete", "other", "refs/tags/v2"},
                                         {"ObjectCreated:Put", "origins", "ab/refs/heads/main"},
                                         {"ObjectCreated:Put", "elsewhere", "a/HEAD"},
                                         {"ObjectCreated:Put", "origins", "a/HEAD"}};
    CHECK(repositories_announced(records, origins, ignored) == std::vector<std::string>{"a", "whole"});
    CHECK(ignored == 3);
}

TEST_CASE("event receiver: a signed webhook starts a pass, and a bad, stale, replayed or unknown one is 401 and counted") {
    test::captured_log log;
    metrics counted({"0.1.0", "0.12.2", true});
    counted.set_repositories({{"population", 60}, {"quiet", 60}});
    std::vector<std::string> started;
    event_receiver receiver(
        counted, log.log,
        [&](std::string const& repo, std::string const& source) { started.push_back(repo + "/" + source); },
        now - 3600);
    config::event_secrets secrets;
    secrets.webhooks.emplace("population", secret);
    secrets.webhooks.emplace("quiet", secret);
    receiver.configure(secrets, 300s,
                       {{"population", config::event_sources{true, false}, std::nullopt},
                        {"quiet", config::event_sources{false, false}, std::nullopt}});
    std::string const body = "{}";
    auto const ts = std::to_string(now);
    auto const sig = webhook_signature(secret, ts, "/hooks/population", body);
    auto request = [&](std::string const& target, std::string const& signature, std::string const& timestamp) {
        return event_request{target, signature, timestamp, body, false};
    };
    auto good = receiver.handle(request("/hooks/population", sig, ts), now);
    CHECK(good.status == 202);
    CHECK(good.json.find("population") != std::string::npos);
    CHECK(started == std::vector<std::string>{"population/webhook"});

    CHECK(receiver.handle(request("/hooks/population", sig, ts), now + 5).status == 401); // replayed
    CHECK(receiver.handle(request("/hooks/population", "", ts), now).status == 401);
    CHECK(receiver
              .handle(request("/hooks/population",
                              webhook_signature("x-secret-of-16-bytes", ts, "/hooks/population", body), ts),
                      now)
              .status == 401);
    CHECK(receiver.handle(request("/hooks/population", sig, ts), now + 3600).status == 401);
    CHECK(receiver.handle(request("/hooks/quiet", sig, ts), now).status == 401); // not configured for webhooks
    CHECK(receiver.handle(request("/hooks/nobody", sig, ts), now).status == 401);
    CHECK(receiver.handle(request("/hooks/../etc", sig, ts), now).status == 401);
    CHECK(receiver.handle({"/hooks/population", sig, ts, "", true}, now).status == 413);
    CHECK(receiver.handle(request("/other", sig, ts), now).status == 404);
    CHECK(started.size() == 1);

    auto text = counted.text();
    CHECK(has_line(text, R"(fdl_mirror_events_received_total{source="webhook"} 9)"));
    CHECK(has_line(text, R"(fdl_mirror_events_accepted_total{repo="population",source="webhook"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_events_refused_total{reason="replayed",source="webhook"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_events_refused_total{reason="missing_signature",source="webhook"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_events_refused_total{reason="bad_signature",source="webhook"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_events_refused_total{reason="stale_timestamp",source="webhook"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_events_refused_total{reason="unknown_repository",source="webhook"} 3)"));
    CHECK(has_line(text, R"(fdl_mirror_events_refused_total{reason="too_large",source="webhook"} 1)"));
    // No refusal names the repository a sender chose, in the metrics or the log.
    CHECK(text.find("nobody") == std::string::npos);
    CHECK(log.read().find("nobody") == std::string::npos);
    CHECK(log.read().find(secret) == std::string::npos);
}

TEST_CASE("event receiver: an S3 notification with the token starts the passes of the repositories it concerns") {
    test::captured_log log;
    metrics counted({"0.1.0", "0.12.2", true});
    counted.set_repositories({{"a", 60}, {"b", 60}});
    std::vector<std::string> started;
    event_receiver receiver(
        counted, log.log, [&](std::string const& repo, std::string const&) { started.push_back(repo); }, now - 3600);
    config::event_secrets secrets;
    secrets.s3_token = "token-0123456789abcdef";
    receiver.configure(secrets, 300s,
                       {{"a", config::event_sources{false, true}, s3_origin_of("a", "s3://origins/a/")},
                        {"b", config::event_sources{false, true}, s3_origin_of("b", "s3://origins/b/")}});
    std::string const body =
        R"({"Records":[{"eventSource":"ceph:s3","eventName":"ObjectCreated:Put","s3":{"bucket":{"name":"origins"},"object":{"key":"a/refs/heads/main"}}},)"
        R"({"eventSource":"ceph:s3","eventName":"ObjectCreated:Put","s3":{"bucket":{"name":"origins"},"object":{"key":"b/data/x.parquet"}}}]})";
    auto answer = receiver.handle({"/events/s3?token=token-0123456789abcdef", "", "", body, false}, now);
    CHECK(answer.status == 200);
    CHECK(started == std::vector<std::string>{"a"});
    CHECK(receiver.handle({"/events/s3?token=wrong-0123456789abcdef", "", "", body, false}, now).status == 401);
    CHECK(receiver.handle({"/events/s3", "", "", body, false}, now).status == 401);
    CHECK(receiver.handle({"/events/s3?token=token-0123456789abcdef", "", "", "{", false}, now).status == 400);
    CHECK(started.size() == 1);
    auto text = counted.text();
    CHECK(has_line(text, R"(fdl_mirror_events_received_total{source="s3"} 4)"));
    CHECK(has_line(text, R"(fdl_mirror_events_accepted_total{repo="a",source="s3"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_events_ignored_total{source="s3"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_events_refused_total{reason="bad_token",source="s3"} 2)"));
    CHECK(has_line(text, R"(fdl_mirror_events_refused_total{reason="malformed",source="s3"} 1)"));
    CHECK(log.read().find("token-0123456789abcdef") == std::string::npos);
}

TEST_CASE("event receiver: one repository's flood of webhooks never refuses another's, and each refusal is logged") {
    // Issue 45: one replay table of 4,096 entries for every repository refused everything
    // once full, and the victim's refusals were not logged.
    test::captured_log log;
    metrics counted({"0.1.0", "0.12.2", true});
    counted.set_repositories({{"noisy", 60}, {"victim", 60}});
    std::vector<std::string> started;
    event_receiver receiver(
        counted, log.log, [&](std::string const& repo, std::string const&) { started.push_back(repo); }, now - 3600);
    config::event_secrets secrets;
    secrets.webhooks.emplace("noisy", "secret-of-the-noisy-one");
    secrets.webhooks.emplace("victim", "secret-of-the-victim-1");
    receiver.configure(secrets, 300s,
                       {{"noisy", config::event_sources{true, false}, std::nullopt},
                        {"victim", config::event_sources{true, false}, std::nullopt}});
    auto send = [&](std::string const& repo, std::string const& body, std::string const& ts) {
        auto signature = webhook_signature(secrets.webhooks.at(repo), ts, "/hooks/" + repo, body);
        return receiver.handle(event_request{"/hooks/" + repo, signature, ts, body, false}, now).status;
    };
    auto const ts = std::to_string(now);
    std::size_t accepted = 0;
    for (int i = 0; i < 5000; ++i)
        accepted += send("noisy", "{\"n\":" + std::to_string(i) + "}", ts) == 202;
    CHECK(accepted == 4096); // its own table is full: the rest of its flood is refused
    CHECK(send("victim", "{}", ts) == 202);
    CHECK(started.back() == "victim");
    // A replay of the victim's event is refused and logged, though the noisy one's
    // replays were logged a moment ago.
    CHECK(send("victim", "{}", ts) == 401);
    CHECK(log.read().find("webhook event refused (replayed): for repository victim") != std::string::npos);

    // A request signed for one repository does not pass for another with the same secret.
    secrets.webhooks["victim"] = secrets.webhooks.at("noisy");
    receiver.configure(secrets, 300s,
                       {{"noisy", config::event_sources{true, false}, std::nullopt},
                        {"victim", config::event_sources{true, false}, std::nullopt}});
    auto for_noisy = webhook_signature(secrets.webhooks.at("noisy"), ts, "/hooks/noisy", "{\"x\":1}");
    CHECK(receiver.handle(event_request{"/hooks/victim", for_noisy, ts, "{\"x\":1}", false}, now).status == 401);
}

TEST_CASE("event receiver: a webhook signed before the daemon started is refused as stale") {
    // The replays an earlier run accepted are not remembered; the passes at start cover them.
    test::captured_log log;
    metrics counted({"0.1.0", "0.12.2", true});
    counted.set_repositories({{"population", 60}});
    std::vector<std::string> started;
    event_receiver receiver(
        counted, log.log, [&](std::string const& repo, std::string const&) { started.push_back(repo); }, now);
    config::event_secrets secrets;
    secrets.webhooks.emplace("population", secret);
    receiver.configure(secrets, 300s, {{"population", config::event_sources{true, false}, std::nullopt}});
    auto answer_to_one_sent_at = [&](std::int64_t sent) {
        auto const ts = std::to_string(sent);
        auto const signature = webhook_signature(secret, ts, "/hooks/population", "{}");
        return receiver.handle(event_request{"/hooks/population", signature, ts, "{}", false}, now + 5).status;
    };
    CHECK(answer_to_one_sent_at(now - 10) == 401);
    CHECK(log.read().find("signed before this daemon started") != std::string::npos);
    CHECK(answer_to_one_sent_at(now + 1) == 202);
    CHECK(started == std::vector<std::string>{"population"});
}

TEST_CASE("event receiver: what a request's head alone refuses is refused before its body is read, and counted once") {
    test::captured_log log;
    metrics counted({"0.1.0", "0.12.2", true});
    counted.set_repositories({{"population", 60}});
    event_receiver receiver(counted, log.log, [](std::string const&, std::string const&) {}, now - 3600);
    config::event_secrets secrets;
    secrets.webhooks.emplace("population", secret);
    secrets.s3_token = "token-0123456789abcdef";
    receiver.configure(secrets, 300s, {{"population", config::event_sources{true, false}, std::nullopt}});
    auto head = [](std::string_view target, std::string_view signature, std::string_view timestamp) {
        return event_request{target, signature, timestamp, std::string_view(), false};
    };
    auto const ts = std::to_string(now);
    // Refused from the head: no signature, no timestamp, no webhook for that name, no token.
    CHECK(receiver.check_head(head("/hooks/population", "", ts), now)->status == 401);
    CHECK(receiver.check_head(head("/hooks/population", "sha256=00", ""), now)->status == 401);
    CHECK(receiver.check_head(head("/hooks/nobody", "sha256=00", ts), now)->status == 401);
    CHECK(receiver.check_head(head("/events/s3?token=wrong", "", ""), now)->status == 401);
    // The body is needed for the rest: the MAC, the window, a replay.
    CHECK_FALSE(receiver.check_head(head("/hooks/population", "sha256=00", ts), now).has_value());
    CHECK_FALSE(receiver.check_head(head("/events/s3?token=token-0123456789abcdef", "", ""), now).has_value());
    CHECK_FALSE(receiver.check_head(head("/elsewhere", "", ""), now).has_value()); // handle() says 404
    auto text = counted.text();
    CHECK(has_line(text, R"(fdl_mirror_events_received_total{source="webhook"} 3)"));
    CHECK(has_line(text, R"(fdl_mirror_events_received_total{source="s3"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_events_refused_total{reason="missing_signature",source="webhook"} 1)"));
    CHECK(has_line(text, R"(fdl_mirror_events_refused_total{reason="bad_token",source="s3"} 1)"));
}
