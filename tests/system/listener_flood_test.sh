# Listeners under a flood of connections (issue 45, section 2): 5,000 connections, spread
# over 250 source addresses, to the metrics and the events listeners at once, each event
# request sending its head and most of a 200 KB body, then holding on. Meanwhile the real
# scraper (from 127.0.0.1) is answered, a pass publishes a new version, no pass fails for
# want of descriptors, and the daemon's peak stays within memory_limit 64MiB + 32 MiB.
# Before, 300 idle connections exhausted the descriptors and 1,500 bodies took 402 MB.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

overhead=$((32 << 20))
secret=webhook-secret-0123456789
write_webhook_secret population "$secret"
"$FDL_PUBLISHER" sample "$work/origin" >/dev/null
cat >"$work/mirror.yaml" <<YAML
listen: 127.0.0.1:0
state_dir: $work/state
memory_limit: 64MiB
defaults: { interval: 1s, jitter: 0%, signatures: off }
events: { listen: 127.0.0.1:0, secrets_file: $work/events.yaml, timestamp_window: 5m }
repositories:
  - { name: population, origin: $work/origin, mirror: $work/mirror, events: [ webhook ] }
YAML
start_daemon "$work/mirror.yaml"
wait_for_metric 'fdl_mirror_passes_total{repo="population",result="ok"}' '>=' 1 30 "the first pass"

# The flood runs in the background for 20 s: connections opened as fast as the daemon
# takes them, each held until the daemon closes it or the flood ends.
python3 - "$daemon_port" "$(events_port)" "$work/flood.out" <<'PY' &
import resource, socket, sys, time
metrics_port, events_port, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 12000), hard))
head = ("POST /hooks/population HTTP/1.1\r\nHost: x\r\nContent-Length: 200000\r\n"
        "X-Fdl-Timestamp: %d\r\nX-Hub-Signature-256: sha256=%s\r\n\r\n" % (time.time(), "0" * 64)).encode()
body = b"x" * 190000
held, opened, refused = [], 0, 0
end = time.time() + 20
for i in range(5000):
    if time.time() > end:
        break
    s = socket.socket()
    s.settimeout(1)
    try:
        s.bind(("127.0.1.%d" % (2 + i % 250), 0))
        s.connect(("127.0.0.1", events_port if i % 2 else metrics_port))
        s.setblocking(False)  # send what the kernel takes now, never wait on the daemon
        if i % 2:
            s.send(head + body)
        else:
            s.send(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\n")  # a head never finished
        opened += 1
        held.append(s)
    except OSError:
        refused += 1
        s.close()
while time.time() < end:
    time.sleep(0.5)
open(out, "w").write("opened %d, refused at once %d\n" % (opened, refused))
PY
flood=$!

# While it runs: the scraper is answered, and a new version is published.
sleep 2
new=$("$FDL_PUBLISHER" add "$work/origin" main 100)
scrapes=0 answered=0
for _ in $(seq 1 10); do
  scrapes=$((scrapes + 1))
  scrape && answered=$((answered + 1))
  sleep 1
done
[ "$answered" -ge 9 ] && pass || fail "the scraper was answered $answered times of $scrapes during the flood"
wait_until 30 "a pass during the flood published the new version" \
  '[ "$(ref_of "$work/mirror" refs/heads/main)" = "$new" ]'
peak_kib=$(awk '/^VmHWM:/ {print $2}' "/proc/$daemon_pid/status")
wait "$flood" || fail "the flood's script failed"
echo "flood: $(cat "$work/flood.out" 2>/dev/null)"
[ "$peak_kib" -le $(((64 << 10) + (overhead >> 10))) ] && pass ||
  fail "the daemon's peak RSS $((peak_kib >> 10)) MiB, over memory_limit 64 MiB + 32 MiB"
echo "daemon under the flood: peak RSS $((peak_kib >> 10)) MiB"
grep -q "Too many open files" "$daemon_log" && fail "a pass ran out of descriptors" || pass
scrape && pass || fail "the scraper after the flood"
stop_daemon TERM 10
expect_clean_exit "SIGTERM"
finish
