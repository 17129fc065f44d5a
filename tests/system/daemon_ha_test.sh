# Several daemons sharing one S3 mirror (Ceph RGW), as docs/operations.md "Running several
# instances" promises: three daemons with the same twelve repositories, whose origins keep
# publishing. Each daemon reaches RGW through a proxy of its own that records every
# exchange (ha_tools.py proxy), and a sampler reads every mirror's main branch straight
# from RGW throughout (ha_tools.py sample). One daemon is killed with -9 and comes back;
# another is stopped with SIGSTOP past its leases, then resumed. Checked: the work is
# spread (no daemon holds more than ceil(M/N) + 1 leases), every repository is taken over
# within the lease time plus a heartbeat, the stopped daemon learns it lost its leases and
# writes nothing more, no ref ever moves back or names a version the mirror lacks, every
# write any daemon made started inside its own lease (ha_tools.py analyse), every mirror
# catches up once the origins stop, and `fdl-mirror verify` passes on each.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

tools=$SOURCE_DIR/tests/system/ha_tools.py
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE AWS_REGION AWS_DEFAULT_REGION \
  AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 AWS_CONFIG_FILE AWS_SHARED_CREDENTIALS_FILE
export HOME=$work
lease_seconds=10
repos=()
for i in $(seq -w 1 12); do repos+=("r$i"); done

start_rgw fleet
for r in "${repos[@]}"; do "$FDL_PUBLISHER" sample "$work/origins/$r" >/dev/null; done

# One recording proxy per daemon.
for d in d1 d2 d3; do
  "$python" "$tools" proxy "$work/$d.proxy-port" "$s3_port" "$work/$d.requests.jsonl" &
  bg_pids+=("$!")
done
wait_until 10 "the proxies listen" '[ -f "$work/d1.proxy-port" ] && [ -f "$work/d2.proxy-port" ] && [ -f "$work/d3.proxy-port" ]'

write_config() { # write_config DAEMON
  local d=$1 r
  {
    cat <<YAML
listen: 127.0.0.1:0
state_dir: $work/state-$d
shutdown_timeout: 5s
coordination:
  mode: leases
  instance: $d
  members: s3://fleet/members/
  lease_duration: ${lease_seconds}s
  max_clock_skew: 1s
  heartbeat_interval: 2s
defaults: { interval: 1s, jitter: 0%, signatures: off, backoff_max: 2s }
stores:
  - match: s3://fleet/
    endpoint: http://127.0.0.1:$(cat "$work/$d.proxy-port")
    region: us-east-1
    addressing: path
    credentials_file: $work/s3-credentials
    allow_plain_http: true
repositories:
YAML
    for r in "${repos[@]}"; do
      printf '  - { name: %s, origin: %s, mirror: s3://fleet/%s/ }\n' "$r" "$work/origins/$r" "$r"
    done
  } >"$work/$d.yaml"
}

declare -A pid port log
start_named() { # start_named DAEMON
  write_config "$1"
  start_daemon "$work/$1.yaml"
  pid[$1]=$daemon_pid port[$1]=$daemon_port log[$1]=$daemon_log
}
# held DAEMON: how many leases DAEMON says it holds (fdl_mirror_lease_held summed); "" when
# it cannot be scraped.
held() {
  daemon_port=${port[$1]}
  scrape "$work/metrics-$1" 2>/dev/null || return 0
  awk -f "$SOURCE_DIR/tests/system/metrics_query.awk" -v command=list -v selector='fdl_mirror_lease_held' \
    "$work/metrics-$1" | awk '{ sum += $NF } END { print sum + 0 }'
}
# holders D...: the leases the daemons D hold, summed, and the most any one holds ("12 5").
holders() {
  local total=0 most=0 d n
  for d in "$@"; do
    n=$(held "$d")
    [ -n "$n" ] || n=0
    total=$((total + n))
    [ "$n" -gt "$most" ] && most=$n
  done
  echo "$total $most"
}
ref_at() { # ref_at REPO: the mirror's refs/heads/main, straight from RGW
  curl -s --max-time 5 --aws-sigv4 aws:amz:us-east-1:s3 --user "$s3_access_key:$s3_secret_key" \
    -H 'x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' \
    "http://127.0.0.1:$s3_port/fleet/$1/refs/heads/main" | tr -d '\n'
}
all_caught_up() {
  local r
  for r in "${repos[@]}"; do [ "$(ref_at "$r")" = "$(ref_of "$work/origins/$r" refs/heads/main)" ] || return 1; done
}

for d in d1 d2 d3; do start_named "$d"; done
wait_until 60 "three daemons hold the twelve leases, each at most ceil(12/3) + 1 = 5" \
  '[ "$(holders d1 d2 d3)" = "12 4" ] || [ "$(holders d1 d2 d3)" = "12 5" ]'
wait_until 60 "every mirror holds its origin's main" all_caught_up

# The origins keep publishing, one version at a time somewhere, while the sampler watches.
touch "$work/publishing"
(
  while [ -f "$work/publishing" ]; do
    r=${repos[RANDOM % 12]}
    "$FDL_PUBLISHER" add "$work/origins/$r" main 256 >/dev/null 2>&1 || true
    sleep 0.3
  done
) &
bg_pids+=("$!")
"$python" "$tools" sample "http://127.0.0.1:$s3_port" fleet "$work/s3-credentials" "$(IFS=,; echo "${repos[*]}")" \
  "$work/samples.txt" "$work/stop-sampling" &
sampler=$!
bg_pids+=("$sampler")
sleep 3

# kill -9: the two others take its repositories once its heartbeat and leases run out.
start=$EPOCHREALTIME
kill -9 "${pid[d1]}"
wait_until $((3 * lease_seconds)) "d2 and d3 hold all twelve leases after d1 was killed, at most ceil(12/2) + 1 each" \
  '[ "$(holders d2 d3)" = "12 6" ] || [ "$(holders d2 d3)" = "12 7" ]'
took=$(seconds_since "$start")
echo "taken over $took s after kill -9"
# The documented bound: a lease (the heartbeat lasts as long), the clock skew allowed, a
# heartbeat interval, a poll interval; plus 4 s for the passes' first requests on a busy
# machine.
bound=$((lease_seconds + 1 + 2 + 1 + 4))
if less_than "$took" "$bound"; then pass; else fail "the takeover took $took s, more than $bound s"; fi

# d1 comes back: the work is spread again.
start_named d1
wait_until 60 "d1 back: each daemon holds at most 5 leases, twelve in all" \
  '[ "$(holders d1 d2 d3)" = "12 4" ] || [ "$(holders d1 d2 d3)" = "12 5" ]'

# SIGSTOP d2 past its leases: the others take its repositories; resumed, it finds them lost.
lost_before=$(grep -c "lease lost to" "${log[d2]}" || true)
kill -STOP "${pid[d2]}"
start=$EPOCHREALTIME
wait_until $((3 * lease_seconds)) "d1 and d3 hold all twelve leases while d2 is stopped" \
  '[ "$(holders d1 d3)" = "12 6" ] || [ "$(holders d1 d3)" = "12 7" ]'
took=$(seconds_since "$start")
echo "taken over $took s after SIGSTOP"
if less_than "$took" "$bound"; then pass; else fail "the takeover after SIGSTOP took $took s, more than $bound s"; fi
sleep 2
kill -CONT "${pid[d2]}"
wait_until 15 "d2, resumed, logs that it lost leases" \
  '[ "$(grep -c "lease lost to" "${log[d2]}" || true)" -gt "$lost_before" ]'
daemon_port=${port[d2]}
wait_for_metric 'fdl_mirror_leases_lost_total{repo="r01"}' '>=' 0 10 "d2 answers again"
lost_total=$(awk -f "$SOURCE_DIR/tests/system/metrics_query.awk" -v command=list -v selector='fdl_mirror_leases_lost_total' \
  "$work/metrics" | awk '{ sum += $NF } END { print sum + 0 }')
if [ "$lost_total" -ge 1 ]; then pass; else fail "fdl_mirror_leases_lost_total of d2 is $lost_total"; fi
wait_until 60 "d2 back in the share: each daemon holds at most 5 leases, twelve in all" \
  '[ "$(holders d1 d2 d3)" = "12 4" ] || [ "$(holders d1 d2 d3)" = "12 5" ]'

# A sync by hand into a mirror a daemon holds stops at once, writing nothing.
s3_env=(env AWS_ACCESS_KEY_ID="$s3_access_key" AWS_SECRET_ACCESS_KEY="$s3_secret_key" AWS_REGION=us-east-1
  AWS_ENDPOINT_URL="http://127.0.0.1:$s3_port")
expect_status 3 "a sync into a mirror a daemon holds is refused" -- \
  "${s3_env[@]}" "$FDL_MIRROR" sync "$work/origins/r03" s3://fleet/r03/ --allow-plain-http
expect_output "fleet/r03/.fdl-mirror/lease is held by d" "the refusal names the lease and its holder"
expect_output "nothing was written" "the refusal says nothing was written"

# The origins stop: every mirror catches up.
rm -f "$work/publishing"
sleep 1
wait_until 60 "every mirror catches up with its origin" all_caught_up
touch "$work/stop-sampling"
wait "$sampler" 2>/dev/null || true
for d in d1 d2 d3; do
  daemon_pid=${pid[$d]} daemon_log=${log[$d]}
  stop_daemon
done

# Once the daemons released their leases on a clean stop, a sync by hand takes the lease at
# once, and gives it back.
"$FDL_PUBLISHER" add "$work/origins/r03" main 256 >/dev/null
expect_status 0 "a sync takes a released lease at once" -- \
  "${s3_env[@]}" "$FDL_MIRROR" sync "$work/origins/r03" s3://fleet/r03/ --allow-plain-http
if [ "$(ref_at r03)" = "$(ref_of "$work/origins/r03" refs/heads/main)" ]; then pass; else
  fail "the sync did not bring r03 up to date"; fi
lease_after=$(curl -s --aws-sigv4 aws:amz:us-east-1:s3 --user "$s3_access_key:$s3_secret_key" \
  -H 'x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' \
  "http://127.0.0.1:$s3_port/fleet/r03/.fdl-mirror/lease")
if grep -q '"holder":"sync@' <<<"$lease_after" && grep -q '"expires":0' <<<"$lease_after"; then pass; else
  fail "the sync left the lease as $lease_after, not released by it"; fi

rounds=$(grep -c '^round' "$work/samples.txt" || true)
echo "the sampler made $rounds rounds"
if [ "$rounds" -ge 30 ]; then pass; else fail "the sampler made only $rounds rounds"; fi
if grep -q '^PROBLEM' "$work/samples.txt"; then
  fail "a mirror's ref moved back or named a missing version: $(grep '^PROBLEM' "$work/samples.txt" | head -n 5)"
else pass; fi
expect_status 0 "every write started inside its daemon's lease" -- \
  "$python" "$tools" analyse "$lease_seconds" "$work/d1.requests.jsonl" "$work/d2.requests.jsonl" \
  "$work/d3.requests.jsonl"
cat "$work/out"
# The analysis can fail: a write by d2 half a second after the last lease write of r01 (the
# release of a clean stop) is caught.
last_lease_end=$(grep -h '"/fleet/r01/.fdl-mirror/lease"' "$work"/d?.requests.jsonl | grep '"status": 200' |
  "$python" -c 'import json, sys; print(max(json.loads(l)["end"] for l in sys.stdin))')
mkdir -p "$work/forged"
cp "$work/d2.requests.jsonl" "$work/forged/d2.requests.jsonl"
printf '{"start": %s, "end": %s, "method": "PUT", "path": "/fleet/r01/refs/heads/main", "query": "", "status": 200}\n' \
  "$(awk -v t="$last_lease_end" 'BEGIN { printf "%.3f", t + 0.5 }')" \
  "$(awk -v t="$last_lease_end" 'BEGIN { printf "%.3f", t + 0.6 }')" >>"$work/forged/d2.requests.jsonl"
expect_status 1 "the analysis catches a write outside its daemon's lease" -- \
  "$python" "$tools" analyse "$lease_seconds" "$work/d1.requests.jsonl" "$work/forged/d2.requests.jsonl" "$work/d3.requests.jsonl"
expect_output "PROBLEM d2 wrote PUT /fleet/r01/refs/heads/main" "the forged write is named"
for r in "${repos[@]}"; do
  expect_status 0 "the mirror $r verifies" -- env AWS_ACCESS_KEY_ID="$s3_access_key" \
    AWS_SECRET_ACCESS_KEY="$s3_secret_key" AWS_REGION=us-east-1 AWS_ENDPOINT_URL="http://127.0.0.1:$s3_port" \
    "$FDL_MIRROR" verify "s3://fleet/$r/" --allow-plain-http
done
finish
