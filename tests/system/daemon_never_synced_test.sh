# A repository that never succeeds (issue 17): an S3 mirror whose credentials are wrong, so
# every pass fails from the first. Before, last_success stayed 0 (which FdlMirrorStale leaves
# out), no ref series appeared (FdlMirrorBehind), the origin was fine (OriginUnreachable),
# /readyz said ready, and nothing paged. Now: /readyz answers 503 naming the repository once
# its grace (its pass_timeout) is over, /healthz stays 200, and the shipped rules fire
# FdlMirrorPassesFailing on the series the real daemon emitted (twenty scrapes, taken as a
# minute apart). Fixed credentials: the next pass succeeds and /readyz is 200 again.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

"$FDL_PUBLISHER" sample "$work/origin" >/dev/null
start_s3 mirror
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE AWS_REGION AWS_DEFAULT_REGION \
  AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 AWS_CONFIG_FILE AWS_SHARED_CREDENTIALS_FILE
export HOME=$work
cp "$work/s3-credentials" "$work/good-credentials"
printf 'access_key_id = NOBODY\nsecret_access_key = WRONG\n' >"$work/s3-credentials"

cat >"$work/mirror.yaml" <<YAML
listen: 127.0.0.1:0
state_dir: $work/state
defaults: { interval: 1s, jitter: 0%, signatures: off, backoff_max: 1s, pass_timeout: 3s }
repositories:
  - { name: population, origin: $work/origin, mirror: s3://mirror/population/ }
stores:
  - match: s3://mirror/
    endpoint: http://127.0.0.1:$s3_port
    region: us-east-1
    addressing: path
    credentials_file: $work/s3-credentials
    allow_plain_http: true
YAML

daemon_started=$(date +%s.%N)
start_daemon "$work/mirror.yaml"
wait_for_metric 'fdl_mirror_passes_total{repo="population",result="failed"}' '>=' 1 20 "the first pass fails"
# Within its grace (pass_timeout, 3 s here) a repository that never completed a pass does
# not make the daemon unready; past it, it does, and /readyz says which and why.
wait_until 10 "/readyz answers 503 past the grace" '[ "$(http_status /readyz)" = 503 ]'
curl -s --max-time 5 "$(url /readyz)" >"$work/readyz.txt" || true
grep -q 'population: no pass completed' "$work/readyz.txt" && pass ||
  fail "/readyz does not name the repository: $(cat "$work/readyz.txt")"
grep -q 'last error: mirror: .*403 InvalidAccessKeyId' "$work/readyz.txt" && pass ||
  fail "/readyz does not give the last error: $(cat "$work/readyz.txt")"
[ "$(http_status /healthz)" = 200 ] && pass || fail "/healthz is not 200 while the daemon runs"

# Twenty scrapes, about a second apart. Failed passes come and go (a count over a window
# would too, with the backoff spacing them up to an hour apart); when they began does not.
failed=() since=() success=()
first_scrape=$(date +%s.%N)
for i in $(seq 1 20); do
  scrape
  failed+=("$(metric 'fdl_mirror_passes_total{repo="population",result="failed"}')")
  since+=("$(metric 'fdl_mirror_failing_since_timestamp_seconds{repo="population"}')")
  success+=("$(metric 'fdl_mirror_last_success_timestamp_seconds{repo="population"}')")
  sleep 1
done
echo "failed passes at each scrape: ${failed[*]}; failing since: ${since[0]}"
[ "${failed[19]}" -gt "${failed[0]}" ] && pass || fail "the failed passes did not grow: ${failed[*]}"
[ "$(printf '%s\n' "${success[@]}" | sort -u)" = 0 ] && pass || fail "last_success was not 0 throughout: ${success[*]}"
[ "$(printf '%s\n' "${since[@]}" | sort -u | wc -l)" = 1 ] && pass ||
  fail "failing_since moved while every pass failed: ${since[*]}"
awk -v s="${since[0]}" -v first="$first_scrape" -v started="$daemon_started" \
  'BEGIN { exit !(s + 0 > 0 && s + 0 <= first + 0 && s + 0 >= started - 1) }' && pass ||
  fail "failing_since ${since[0]} is not the first failed pass's start (daemon started $daemon_started)"

# A restart keeps it: the state file holds it, and the next life goes on failing.
stop_daemon TERM 10
start_daemon "$work/mirror.yaml"
wait_for_metric 'fdl_mirror_passes_total{repo="population",result="failed"}' '>=' 1 20 "the next life's first pass fails"
expect_metric 'fdl_mirror_failing_since_timestamp_seconds{repo="population"}' '==' "${since[0]}" \
  "failing_since after a restart"
"$FDL_MIRROR" status --config "$work/mirror.yaml" --json >"$work/status.json" 2>/dev/null || true
python3 - "$work/status.json" "${since[0]}" <<'PY' && pass || fail "status --json lacks failing_since ${since[0]}: $(cat "$work/status.json")"
import json, sys
repos = json.load(open(sys.argv[1]))["repositories"]
sys.exit(0 if abs(repos[0]["failing_since"] - float(sys.argv[2])) < 0.01 else 1)
PY

# The shipped rule on that value, the scrapes taken as a minute apart: the first scrape is
# minute 30 (a timestamp must be positive), and the value keeps its distance from it, in
# minutes for seconds; it holds while the passes fail, as the daemon holds it.
shifted=$(awk -v s="${since[0]}" -v first="$first_scrape" 'BEGIN { printf "%.0f", 1800 + (s - first) * 60 }')
failing_for=$((65 * 60 - shifted)) # at minute 65, under an hour
failing_for="$((failing_for / 60))m $((failing_for % 60))s"
rules_test_preamble "$work/alerts/never.test.yml"
cat >>"$work/alerts/never.test.yml" <<YAML
      - series: 'fdl_mirror_failing_since_timestamp_seconds{job="fdl-mirror",instance="mirror-1:9464",repo="population"}'
        values: '${shifted}x70'
      - series: 'fdl_mirror_last_success_timestamp_seconds{job="fdl-mirror",instance="mirror-1:9464",repo="population"}'
        values: '${success[*]}'
      - series: 'fdl_mirror_interval_seconds{job="fdl-mirror",instance="mirror-1:9464",repo="population"}'
        values: '1x19'
    alert_rule_test:
      - eval_time: 19m
        alertname: FdlMirrorStale
        exp_alerts: []          # never succeeded: left out, as before
      - eval_time: $(( (1800 + shifted) / 60 - 1 ))m
        alertname: FdlMirrorPassesFailing
        exp_alerts: []
      - eval_time: 65m
        alertname: FdlMirrorPassesFailing
        exp_alerts:
          - exp_labels:
              severity: warning
              job: fdl-mirror
              repo: population
            exp_annotations:
              summary: "fdl-mirror: every pass of population has failed for $failing_for"
              description: "Every pass of repository population for $failing_for failed or timed out, and none completed: the mirror is not kept up to date, and may never have been."
              runbook_url: docs/operations.md#fdlmirrorpassesfailing
YAML
expect_rules_test "$work/alerts/never.test.yml" \
  "the shipped rules fire FdlMirrorPassesFailing on the real daemon's failures"

# The credentials fixed: the next pass reads them anew (after a failed pass, every store of
# the repository is opened again), and the daemon is ready again.
cp "$work/good-credentials" "$work/s3-credentials"
wait_for_metric 'fdl_mirror_passes_total{repo="population",result="ok"}' '>=' 1 30 "a pass succeeds with the right keys"
wait_until 10 "/readyz answers 200 again" '[ "$(http_status /readyz)" = 200 ]'
stop_daemon TERM 10
expect_clean_exit "SIGTERM"
finish
