#!/usr/bin/env bash
# What attestations and peer comparisons cost the mirror's store (issue 34), counted by the
# daemon itself (fdl_mirror_requests_total, by store and method) against Ceph RGW: the
# 30-version benchmark repository mirrored once, then the same daemon's passes with nothing
# to copy, side by side:
#   plain     passes alone (1 s apart): the floor every other row is measured against
#   attested  the same passes, each attesting (attestation.interval 1s): the difference is
#             one attestation's requests; its first pass reads what it does not remember
#   peers     the same passes, comparing the mirror with a peer mirror in RGW every second
#             (compare_interval 1s): what one comparison reads of the peer, and of the mirror
#
#   bench/attestation_bench.sh [PASSES]    (default 20; needs a build and radosgw: scripts/setup)
set -euo pipefail
cd "$(dirname "$0")/.."
passes=${1:-20}
build=${FDL_MIRROR_BUILD_DIR:-build}
fdl_mirror=$PWD/$build/fdl-mirror
publisher=$PWD/$build/fdl-test-publisher
for tool in "$fdl_mirror" "$publisher"; do
  [ -x "$tool" ] || { echo "missing $tool: run scripts/setup" >&2; exit 2; }
done
command -v radosgw >/dev/null || { echo "missing radosgw: run scripts/setup" >&2; exit 2; }

work=$(mktemp -d /tmp/fdl-mirror-attestation-bench.XXXXXX)
daemon_pid=
cleanup() {
  [ -z "$daemon_pid" ] || kill "$daemon_pid" 2>/dev/null || true
  [ ! -x "$work/rgw/stop-rgw.sh" ] || "$work/rgw/stop-rgw.sh" >/dev/null 2>&1 || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

echo "origin: the 30-version benchmark repository (20 x 16 KiB files a version)"
"$publisher" bench "$work/origin" 30 20 16384 0 0 >/dev/null
printed=$(BASE="$work/rgw" bash scripts/deps/rgw/start-rgw.sh 2>"$work/rgw-start.log") ||
  { echo "Ceph RGW did not start:" >&2; tail -5 "$work/rgw-start.log" >&2; exit 3; }
endpoint=$(sed -n 's/^S3_ENDPOINT=//p' <<<"$printed")
key=$(sed -n 's/^S3_ACCESS_KEY=//p' <<<"$printed")
secret=$(sed -n 's/^S3_SECRET_KEY=//p' <<<"$printed")
printf 'access_key_id = %s\nsecret_access_key = %s\n' "$key" "$secret" >"$work/credentials"
curl -sS -f -X PUT --aws-sigv4 aws:amz:us-east-1:s3 --user "$key:$secret" \
  -H 'x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' "$endpoint/mirror" >/dev/null
ssh-keygen -q -t ed25519 -N '' -C bench -f "$work/key"
s3_env=(env AWS_ACCESS_KEY_ID="$key" AWS_SECRET_ACCESS_KEY="$secret" AWS_REGION=us-east-1 AWS_ENDPOINT_URL="$endpoint")
"${s3_env[@]}" "$fdl_mirror" sync "$work/origin" s3://mirror/peer/ --signatures off --allow-plain-http >/dev/null

# run NAME EXTRA_TOP EXTRA_REPO: the daemon with those lines for PASSES passes after its
# first; prints "first_pass_requests per_pass_mirror per_pass_peer" (GET, PUT and LIST alike).
run() {
  local port
  port=$(free_port)
  cat >"$work/$1.yaml" <<YAML
listen: 127.0.0.1:$port
state_dir: $work/state-$1
$2
defaults: { interval: 1s, jitter: 0%, signatures: off, recheck_interval: 1h }
repositories:
  - name: bench
    origin: $work/origin
    mirror: s3://mirror/bench/
$3
stores:
  - match: s3://mirror/
    endpoint: $endpoint
    region: us-east-1
    addressing: path
    credentials_file: $work/credentials
    allow_plain_http: true
YAML
  "$fdl_mirror" run --config "$work/$1.yaml" 2>"$work/$1.log" &
  daemon_pid=$!
  local metrics="http://127.0.0.1:$port/metrics"
  count() { # count STORE: the requests of that store so far; then the passes completed
    curl -fsS "$metrics" 2>/dev/null | awk -v store="$1" '
      /^fdl_mirror_requests_total\{/ && index($0, "store=\"" store "\"") { n += $NF }
      /^fdl_mirror_passes_total\{/ && /result="ok"/ { p += $NF }
      END { print n + 0, p + 0 }'
  }
  local passes_done=0 first_mirror
  until [ "$passes_done" -ge 1 ]; do sleep 0.2; read -r _ passes_done < <(count mirror) || true; done
  sleep 0.5 # the first pass's attestation and comparison, after its end
  read -r first_mirror passes_done < <(count mirror)
  local start_mirror start_peer start_passes end_mirror end_peer end_passes
  read -r start_mirror start_passes < <(count mirror)
  read -r start_peer _ < <(count peer)
  until [ "$passes_done" -ge $((start_passes + passes)) ]; do sleep 0.2; read -r _ passes_done < <(count mirror); done
  sleep 0.5
  read -r end_mirror end_passes < <(count mirror)
  read -r end_peer _ < <(count peer)
  kill "$daemon_pid"
  wait "$daemon_pid" 2>/dev/null || true
  daemon_pid=
  awk -v f="$first_mirror" -v m=$((end_mirror - start_mirror)) -v p=$((end_peer - start_peer)) \
    -v n=$((end_passes - start_passes)) 'BEGIN { printf "%d %.1f %.1f\n", f, m / n, p / n }'
}

echo "the first copy into RGW (not counted)"
run warmup "" "" >/dev/null
read -r plain_first plain_mirror _ < <(run plain "" "")
read -r cold_first attested_mirror _ < <(run attested "attestation: { key_file: $work/key, interval: 1s, validity: 1h }" "")
read -r warm_first _ _ < <(run attested-again "attestation: { key_file: $work/key, interval: 1s, validity: 1h }" "")
read -r _ peers_mirror peers_peer < <(run peers "" "    peers: [ s3://mirror/peer/ ]
    compare_interval: 1s")

printf '\n%-44s %12s %12s\n' "requests to the mirror's store ($passes passes)" "per pass" "first pass"
printf '%-44s %12s %12s\n' "plain passes (nothing to copy)" "$plain_mirror" "$plain_first"
printf '%-44s %12s %12s\n' "passes that attest" "$attested_mirror" "$cold_first"
printf '%-44s %12s %12s\n' "  after a restart (the last attestation read)" "" "$warm_first"
printf '%-44s %12s\n' "passes that compare with a peer: the mirror" "$peers_mirror"
printf '%-44s %12s\n' "                                 the peer" "$peers_peer"
awk -v a="$attested_mirror" -v p="$plain_mirror" -v c="$peers_mirror" -v q="$peers_peer" 'BEGIN {
  printf "\none attestation: %.1f requests; one comparison: %.1f of the mirror, %.1f of the peer\n", a - p, c - p, q }'
