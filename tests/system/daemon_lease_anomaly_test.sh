# A lease that claims too long is a problem at attention level (issue 31, part 4): a
# forged lease, years ahead, in an S3 mirror (s3rver). The daemon says so at once (the
# error in its log, fdl_mirror_lease_anomaly 1, /status's lease_anomaly, `fdl-mirror
# status` reads it there: attention, exit 1), stands by, takes the lease once it has gone
# unrenewed for lease_duration + max_clock_skew (12 s here) on its own clock, mirrors the
# repository, and clears the anomaly (metric 0, status null) once its own lease is what
# it reads.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE AWS_REGION AWS_DEFAULT_REGION \
  AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 AWS_CONFIG_FILE AWS_SHARED_CREDENTIALS_FILE
export HOME=$work
"$FDL_PUBLISHER" sample "$work/origin" >/dev/null
start_s3 mirror

# The forgery: another holder, token 41, expiring ten years from now (milliseconds).
now_ms=$(($(date +%s) * 1000))
printf '{"holder":"forger/1","token":41,"expires":%d,"since":%d}' \
  $((now_ms + 10 * 365 * 24 * 3600 * 1000)) "$now_ms" >"$work/lease"
# (s3rver wants the payload's digest in x-amz-content-sha256, which curl does not add.)
curl -sS -f -X PUT --aws-sigv4 aws:amz:us-east-1:s3 --user "$s3_access_key:$s3_secret_key" \
  -H "x-amz-content-sha256: $(sha256sum "$work/lease" | cut -d' ' -f1)" \
  --data-binary @"$work/lease" "http://127.0.0.1:$s3_port/mirror/lake/.fdl-mirror/lease" >/dev/null &&
  pass || fail "the forged lease is not written"

cat >"$work/mirror.yaml" <<YAML
listen: 127.0.0.1:0
state_dir: $work/state
shutdown_timeout: 5s
coordination: { instance: honest, lease_duration: 10s, max_clock_skew: 2s, heartbeat_interval: 2s }
defaults: { interval: 1s, jitter: 0%, signatures: off }
repositories:
  - name: population
    origin: $work/origin
    mirror: s3://mirror/lake/
stores:
  - match: s3://mirror/
    endpoint: http://127.0.0.1:$s3_port
    region: us-east-1
    addressing: path
    credentials_file: $work/s3-credentials
    allow_plain_http: true
YAML

start_daemon "$work/mirror.yaml"
wait_for_metric 'fdl_mirror_lease_anomaly{repo="population"}' == 1 10 "the anomaly is counted at once"
expect_metric 'fdl_mirror_lease_held{repo="population"}' == 0 "the forged lease is honoured while it may be"
[ "$(log_lines_with 0 repo=population "forger/1's lease claims")" -ge 1 ] && pass ||
  fail "the log names the holder whose lease claims too long"
[ "$(log_lines_with 0 repo=population "lease claims")" -eq 1 ] && pass || fail "the anomaly logged once, not each poll"
curl -fsS --max-time 5 "$(url /status)" >"$work/status.json" || fail "GET /status"
python3 - "$work/status.json" <<'PY' && pass || fail "/status: lease_anomaly and attention"
import json, sys
repo = json.load(open(sys.argv[1]))["repositories"][0]
assert "more than lease_duration and max_clock_skew allow" in repo["lease_anomaly"], repo
assert repo["attention"] is True, repo
PY

# Unrenewed for 12 s on the daemon's clock: taken, mirrored, and the anomaly clears.
wait_for_metric 'fdl_mirror_lease_held{repo="population"}' == 1 30 "the forged lease taken once unrenewed"
wait_for_metric 'fdl_mirror_ref_in_sync{repo="population",ref="refs/heads/main"}' == 1 30 "the repository mirrored"
wait_for_metric 'fdl_mirror_lease_anomaly{repo="population"}' == 0 15 "the anomaly clears with the daemon's own lease"
[ "$(log_lines_with 0 repo=population 'the lease is sound again')" -ge 1 ] && pass ||
  fail "the log says the lease is sound again"
curl -fsS --max-time 5 "$(url /status)" >"$work/status.json" || fail "GET /status"
python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["repositories"][0]; assert r["lease_anomaly"] is None, r' \
  "$work/status.json" && pass || fail "/status: lease_anomaly null again"
[ "$(log_lines_with 0 repo=population "lease claims")" -eq 1 ] && pass || fail "the anomaly logged once in all"
stop_daemon TERM 10
expect_clean_exit "SIGTERM"
finish
