// Leases and fenced ref writes against Ceph RGW, whose conditional writes are real
// (If-None-Match: * and If-Match on PUT answer 412), and the probe that tells RGW from
// s3rver (which stores every PUT whatever its conditions). Clocks are driven by the
// test: a "pause" is a holder whose clocks stand still while the other's run.

#include "core/coord/lease.hpp"

#include "core/coord/fenced_store.hpp"
#include "core/coord/probe.hpp"
#include "core/io/errors.hpp"
#include "core/store/s3_store.hpp"
#include "tests/support/manual_clock.hpp"
#include "tests/support/rgw.hpp"
#include "tests/support/run.hpp"
#include "tests/support/s3rver.hpp"

#include <doctest/doctest.h>

#include <limits>

using namespace mirror;
using namespace mirror::test;
using namespace std::chrono_literals;
using coord::lease_change;
using io::store_errc;

namespace {

std::unique_ptr<store::s3_store> open_s3(std::string const& url, std::string const& endpoint, std::string key,
                                         std::string secret) {
    store::s3_store_settings settings;
    settings.access.creds = {std::move(key), std::move(secret), std::nullopt};
    settings.access.endpoint = endpoint;
    settings.access.path_style = true;
    settings.allow_plain_http = true;
    settings.client.backoff_base = 1ms;
    auto opened = store::s3_store::open(url, settings);
    REQUIRE_MESSAGE(opened.has_value(), (opened ? "" : opened.error().message));
    return std::move(*opened);
}

struct lease_fixture {
    rgw_server& server = rgw_server::shared();
    std::string bucket = server.create_bucket("lease");
    event_loop run_on;
    coord::lease_settings settings{".fdl-mirror/lease", 30'000ms, 2'000ms};

    std::unique_ptr<store::s3_store> open() {
        return open_s3("s3://" + bucket + "/repo/", server.endpoint(), server.access_key_id(),
                       server.secret_access_key());
    }
    coord::lease_record record() {
        auto store = open();
        auto bytes = run_on(store::read_all(*store, ".fdl-mirror/lease", 4096));
        REQUIRE(bytes.has_value());
        auto parsed = coord::parse_lease(*bytes, "lease");
        REQUIRE(parsed.has_value());
        return *parsed;
    }
};

lease_change changed(result<lease_change> const& outcome) {
    REQUIRE_MESSAGE(outcome.has_value(), (outcome ? "" : outcome.error().message));
    return *outcome;
}

} // namespace

TEST_CASE("a lease record reads back as written, and a damaged one is refused by name") {
    coord::lease_record record{"host-a/0f3c", 7, 1'800'000'060'000, 1'800'000'000'000};
    auto back = coord::parse_lease(coord::render_lease(record), "s3://b/r/.fdl-mirror/lease");
    REQUIRE(back.has_value());
    CHECK(*back == record);
    CHECK(coord::render_lease(record).find("idle") == std::string::npos); // as earlier daemons wrote it
    record.idle = true;
    auto idle = coord::parse_lease(coord::render_lease(record), "s3://b/r/.fdl-mirror/lease");
    REQUIRE(idle.has_value());
    CHECK(*idle == record);
    for (std::string bad : {"", "{}", R"({"holder": "a", "token": -1, "expires": 0, "since": 0})",
                            R"({"holder": 3, "token": 1, "expires": 0, "since": 0})", "[1]"}) {
        auto refused = coord::parse_lease(bad, "s3://b/r/.fdl-mirror/lease");
        REQUIRE_FALSE(refused.has_value());
        CHECK(refused.error().message.starts_with("s3://b/r/.fdl-mirror/lease"));
    }
}

TEST_CASE_FIXTURE(lease_fixture, "against Ceph RGW: one holder at a time, another takes over only once it expired, "
                                 "under a greater token, and the old holder learns it lost") {
    manual_clock host_a, host_b;
    auto store_a = open(), store_b = open();
    coord::lease a(*store_a, "a/1", settings, host_a.clock());
    coord::lease b(*store_b, "b/1", settings, host_b.clock());

    CHECK(changed(run_on(a.acquire_or_renew())) == lease_change::taken);
    CHECK(a.token() == 1);
    CHECK(a.covers(10s));
    CHECK(changed(run_on(b.acquire_or_renew())) == lease_change::held_by_other);
    CHECK(b.last_seen().holder == "a/1");
    CHECK_FALSE(b.covers(0ms));

    // A renews 20 s later; B, 40 s after A's first take, is within A's renewed lease.
    host_a.advance(20s);
    host_b.advance(40s);
    CHECK(changed(run_on(a.acquire_or_renew())) == lease_change::renewed);
    CHECK(changed(run_on(b.acquire_or_renew())) == lease_change::held_by_other);

    // A stops (a pause): its clocks stand still. Past A's expiry, but within the allowed
    // skew, B still waits; past expiry plus skew, B takes over with token 2.
    host_b.advance(11s); // B at 51 s: A's lease ends at 50 s, plus 2 s of skew
    CHECK(changed(run_on(b.acquire_or_renew())) == lease_change::held_by_other);
    host_b.advance(2s);
    CHECK(changed(run_on(b.acquire_or_renew())) == lease_change::taken);
    CHECK(b.token() == 2);
    CHECK(b.took_over());
    CHECK(b.taken_from() == "a/1");
    CHECK(record().holder == "b/1");
    CHECK(record().token == 2);

    // A wakes: its own clock says its lease has 10 s left, but renewing finds B's.
    CHECK(a.covers(5s));
    CHECK(changed(run_on(a.acquire_or_renew())) == lease_change::lost);
    CHECK_FALSE(a.covers(0ms));
    CHECK(changed(run_on(a.acquire_or_renew())) == lease_change::held_by_other);

    // Released, it is free at once, and the token still grows.
    CHECK(changed(run_on(b.release())) == lease_change::released);
    CHECK_FALSE(b.covers(0ms));
    CHECK(record().expires == 0);
    CHECK(changed(run_on(a.acquire_or_renew())) == lease_change::taken);
    CHECK(a.token() == 3);
    CHECK_FALSE(a.took_over()); // released, not run out
}

TEST_CASE_FIXTURE(lease_fixture, "against Ceph RGW: a lease left unrenewed for duration + skew is taken whatever "
                                 "expiry it claims, a token that cannot grow is refused, never wrapped") {
    manual_clock host;
    auto store = open();
    auto forge = [&](coord::lease_record const& record) {
        REQUIRE(run_on(store::write_all(*store, ".fdl-mirror/lease", coord::render_lease(record),
                                        store::write_mode::replace)));
    };
    coord::lease mine(*store, "b/1", settings, host.clock());
    // Years ahead: no honest holder writes that; it would keep every daemon out. It is
    // said at once, and taken once it has gone unrenewed for duration + skew (32 s) on this
    // host's own clock (never by trusting this host's wall clock over the writer's).
    forge({"forger/1", 41, host.wall + 5LL * 365 * 24 * 3600 * 1000, host.wall});
    CHECK(changed(run_on(mine.acquire_or_renew())) == lease_change::held_by_other);
    CHECK(mine.anomaly().find("forger/1's lease claims") != std::string::npos);
    CHECK(mine.anomaly().find("taken as expired unless renewed within 32 s") != std::string::npos);
    host.advance(20s);
    CHECK(changed(run_on(mine.acquire_or_renew())) == lease_change::held_by_other);
    host.advance(13s);
    CHECK(changed(run_on(mine.acquire_or_renew())) == lease_change::taken);
    CHECK(mine.token() == 42);
    CHECK(mine.anomaly().find("not renewed since, so taken as expired") != std::string::npos);
    // Once its own lease is what it reads, there is nothing more to say.
    host.advance(5s);
    CHECK(changed(run_on(mine.acquire_or_renew())) == lease_change::renewed);
    CHECK(mine.anomaly().empty());
    // Just within duration + skew: honoured, and nothing to say.
    coord::lease other(*store, "c/1", settings, host.clock());
    forge({"d/1", 7, host.wall + 30'000 + 2'000, host.wall});
    CHECK(changed(run_on(other.acquire_or_renew())) == lease_change::held_by_other);
    CHECK(other.anomaly().empty());
    // A token at its largest cannot grow: taking the lease would wrap it to 0.
    forge({"d/1", std::numeric_limits<std::uint64_t>::max(), 0, host.wall});
    auto refused = run_on(other.acquire_or_renew());
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().message.find("the fencing token is at its largest value") != std::string::npos);
    CHECK(record().token == std::numeric_limits<std::uint64_t>::max());
}

TEST_CASE_FIXTURE(lease_fixture, "against Ceph RGW: a lease runs out on the holder's own clock, whatever the wall "
                                 "clock says, and a write that moves something is refused without it") {
    manual_clock host;
    auto lease_store = open();
    coord::lease a(*lease_store, "a/1", settings, host.clock());
    coord::fenced_store fenced(open(), a, 5s);
    // Not yet held: nothing is written.
    auto refused = run_on(store::write_all(fenced, "refs/heads/main", "x\n", store::write_mode::replace));
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == store_errc::conflict);
    CHECK(refused.error().message.find(".fdl-mirror/lease") != std::string::npos);

    CHECK(changed(run_on(a.acquire_or_renew())) == lease_change::taken);
    CHECK(run_on(store::write_all(fenced, "versions/v/version.json", "{}", store::write_mode::create_only)));
    // 26 s on: 4 s left, less than the 5 s margin a write needs. The wall clock going back
    // (a step of NTP) changes nothing.
    host.elapsed += 26'000;
    host.wall -= 3'600'000;
    CHECK(a.covers(4s));
    CHECK_FALSE(a.covers(5s));
    for (auto const& key : {"refs/heads/main", "versions/w/version.json"}) {
        auto late = run_on(store::write_all(fenced, key, "y\n", store::write_mode::replace));
        REQUIRE_FALSE(late.has_value());
        CHECK(late.error().code == store_errc::conflict);
    }
    CHECK_FALSE(run_on(fenced.remove("versions/v/version.json")).has_value());
}

TEST_CASE_FIXTURE(lease_fixture, "against Ceph RGW: a stale holder's ref writes fail when another holder moved the "
                                 "refs meanwhile, even if its clock says its lease still holds") {
    manual_clock host_a, host_b;
    auto lease_a_store = open(), lease_b_store = open();
    coord::lease a(*lease_a_store, "a/1", settings, host_a.clock());
    coord::lease b(*lease_b_store, "b/1", settings, host_b.clock());
    coord::fenced_store mirror_a(open(), a, 1s), mirror_b(open(), b, 1s);
    auto read = [&](coord::fenced_store& from, std::string key) {
        return run_on(store::read_if_present(from, std::move(key), 4096));
    };

    REQUIRE(changed(run_on(a.acquire_or_renew())) == lease_change::taken);
    REQUIRE(read(mirror_a, "refs.json").value() == std::nullopt); // seen absent: a create
    REQUIRE(run_on(store::write_all(mirror_a, "refs.json", "{\"v\": 1}\n", store::write_mode::replace)));
    REQUIRE(run_on(store::write_all(mirror_a, "refs/heads/main", "1\n", store::write_mode::replace)));
    // A writes again over its own writes: each names the tag of the last one.
    REQUIRE(run_on(store::write_all(mirror_a, "refs.json", "{\"v\": 2}\n", store::write_mode::replace)));

    // B takes over after A's lease (A paused with clocks that did not move: a frozen VM
    // whose clock does not count the freeze), reads the refs and moves them on.
    host_b.advance(33s);
    REQUIRE(changed(run_on(b.acquire_or_renew())) == lease_change::taken);
    REQUIRE(read(mirror_b, "refs.json").value() == std::optional<std::string>("{\"v\": 2}\n"));
    REQUIRE(read(mirror_b, "refs/heads/main").value() == std::optional<std::string>("1\n"));
    REQUIRE(run_on(store::write_all(mirror_b, "refs/heads/main", "3\n", store::write_mode::replace)));
    REQUIRE(run_on(store::write_all(mirror_b, "refs.json", "{\"v\": 3}\n", store::write_mode::replace)));

    // A wakes believing it holds the lease, and tries to write what it decided before.
    REQUIRE(a.covers(1s));
    for (auto const& [key, bytes] : {std::pair{"refs/heads/main", "2\n"}, std::pair{"refs.json", "{\"v\": 2.5}\n"}}) {
        auto stale = run_on(store::write_all(mirror_a, key, bytes, store::write_mode::replace));
        REQUIRE_FALSE(stale.has_value());
        CHECK(stale.error().code == store_errc::conflict);
    }
    // A ref A never saw, created meanwhile by B, is not overwritten either.
    REQUIRE(run_on(store::write_all(mirror_b, "refs/heads/dev", "3\n", store::write_mode::replace)));
    CHECK_FALSE(run_on(store::write_all(mirror_a, "refs/heads/dev", "2\n", store::write_mode::replace)).has_value());
    // A tag A finds taken is "already there", as create-only writes say.
    REQUIRE(run_on(store::write_all(mirror_b, "refs/tags/t", "3\n", store::write_mode::create_only)));
    auto tag = run_on(store::write_all(mirror_a, "refs/tags/t", "2\n", store::write_mode::create_only));
    REQUIRE_FALSE(tag.has_value());
    CHECK(tag.error().code == store_errc::already_exists);

    CHECK(read(mirror_b, "refs/heads/main").value() == std::optional<std::string>("3\n"));
    CHECK(read(mirror_b, "refs.json").value() == std::optional<std::string>("{\"v\": 3}\n"));
    CHECK(read(mirror_b, "refs/heads/dev").value() == std::optional<std::string>("3\n"));
    CHECK(read(mirror_b, "refs/tags/t").value() == std::optional<std::string>("3\n"));
}

TEST_CASE_FIXTURE(lease_fixture, "against Ceph RGW: an idle lease costs one write each way, writes nothing under it, "
                                 "and is taken only once it ran out or its holder is known gone") {
    // Issue 33, section 5: between passes a holder writes nothing; its idle lease claims the
    // next pass. A's next pass may start 100 s on; another daemon waits that and a lease.
    manual_clock host_a, host_b;
    auto store_a = open(), store_b = open();
    auto patient = settings;
    patient.idle_patience = 130'000ms; // the longest wait (100 s) and a lease
    coord::lease a(*store_a, "a/1", patient, host_a.clock());
    bool b_knows_a_gone = false;
    auto b_settings = patient;
    b_settings.holder_gone = [&](std::string_view instance) { return b_knows_a_gone && instance == "a"; };
    coord::lease b(*store_b, "b/1", b_settings, host_b.clock());

    CHECK(changed(run_on(a.acquire_or_renew())) == lease_change::taken);
    CHECK(changed(run_on(a.rest(130s))) == lease_change::renewed);
    CHECK(record().idle);
    CHECK_FALSE(a.covers(0ms)); // nothing is written under an idle lease
    CHECK(a.mine());
    // Far past an active lease's time (30 s + 2 s), B still stands by: A claimed 130 s.
    host_b.advance(100s);
    CHECK(changed(run_on(b.acquire_or_renew())) == lease_change::held_by_other);
    // A's next pass: active again, same token, one write.
    host_a.advance(100s);
    CHECK(changed(run_on(a.acquire_or_renew())) == lease_change::renewed);
    CHECK(a.token() == 1);
    CHECK_FALSE(record().idle);
    CHECK(changed(run_on(a.rest(130s))) == lease_change::renewed);

    // A's heartbeat ran out (B's coordinator knows it): its idle lease is B's at once.
    b_knows_a_gone = true;
    CHECK(changed(run_on(b.acquire_or_renew())) == lease_change::taken);
    CHECK(b.token() == 2);
    CHECK(b.took_over());
    CHECK(b.takeover_reason() == "whose heartbeat stopped");
    // A was only paused: making its lease active again fails, and it knows it lost it.
    CHECK(changed(run_on(a.acquire_or_renew())) == lease_change::lost);
    CHECK_FALSE(a.mine());

    // An active lease is never taken for a heartbeat alone: its holder may be writing.
    b_knows_a_gone = true;
    coord::lease c(*store_a, "a/2", settings, host_a.clock());
    CHECK(changed(run_on(c.acquire_or_renew())) == lease_change::held_by_other); // B's, active
    CHECK(changed(run_on(b.release())) == lease_change::released);
}

TEST_CASE("the probe of conditional writes: Ceph RGW honours them, s3rver does not") {
    event_loop run_on;
    rgw_server& rgw = rgw_server::shared();
    auto on_rgw = open_s3("s3://" + rgw.create_bucket("probe") + "/repo/", rgw.endpoint(), rgw.access_key_id(),
                          rgw.secret_access_key());
    auto honoured = run_on(coord::honours_conditional_writes(*on_rgw, ".fdl-mirror/probe-a"));
    REQUIRE_MESSAGE(honoured.has_value(), (honoured ? "" : honoured.error().message));
    CHECK(*honoured);
    CHECK(run_on(on_rgw->stat(".fdl-mirror/probe-a")).error().code == store_errc::not_found); // cleaned up

    s3rver_server s3rver({.buckets = {"mirror"}});
    auto on_s3rver = open_s3("s3://mirror/repo/", s3rver.endpoint(), std::string(s3rver_server::access_key_id),
                             std::string(s3rver_server::secret_access_key));
    auto ignored = run_on(coord::honours_conditional_writes(*on_s3rver, ".fdl-mirror/probe-a"));
    REQUIRE_MESSAGE(ignored.has_value(), (ignored ? "" : ignored.error().message));
    CHECK_FALSE(*ignored);

    // What `sync` remembers of each answer names the server: the endpoint, not the bucket.
    CHECK(on_rgw->server() == rgw.endpoint());
    CHECK(on_s3rver->server() == s3rver.endpoint());
    auto remembered = run_on(coord::honours_conditional_writes_remembered(*on_s3rver, ".fdl-mirror/probe-a",
                                                                          std::chrono::system_clock::now(), 720h));
    REQUIRE(remembered.has_value());
    CHECK_FALSE(*remembered);
    auto kept = run_on(store::read_all(*on_s3rver, std::string(coord::probe_record_key), 4096));
    REQUIRE(kept.has_value());
    CHECK(kept->find(s3rver.endpoint()) != std::string::npos);
}
