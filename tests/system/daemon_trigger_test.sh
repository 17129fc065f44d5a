# `fdl-mirror trigger` and POST /trigger (issue 33, section 3): a pass now, whatever the wait
# in hand (the interval, or the backoff after failures); the answer says when each pass
# started; an unknown repository, a missing daemon and another site's page are refused.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

sample_config "- { name: broken, origin: $work/no-such-origin, mirror: $work/broken-mirror }"

start_daemon "$work/mirror.yaml"
# The command reads the listen address from the configuration: the daemon's, with the port
# it took (listen: 127.0.0.1:0 picks a free one).
sed "s/^listen: .*/listen: 127.0.0.1:$daemon_port/" "$work/mirror.yaml" >"$work/cli.yaml"
wait_for_metric 'fdl_mirror_passes_total{repo="population",result="ok"}' == 1 30 "population's first pass"
wait_for_metric 'fdl_mirror_passes_total{repo="broken",result="failed"}' == 1 30 "broken's first pass"

# population waits its 1 h interval, broken its backoff: a trigger starts each now.
before=$(date -u +%Y-%m-%dT%H:%M:%SZ)
expect_status 0 "trigger of one repository" -- "$FDL_MIRROR" trigger --config "$work/cli.yaml" --repository population
expect_output "population: pass started at 20" "the answer says when the pass started"
started=$(sed -n 's/^population: pass started at //p' "$work/out")
[[ ! "$started" < "$before" ]] && pass || fail "the pass started at $started, before the trigger ($before)"
wait_for_metric 'fdl_mirror_passes_total{repo="population",result="ok"}' == 2 30 "the triggered pass"
expect_metric 'fdl_mirror_passes_total{repo="broken",result="failed"}' == 1 "broken untouched"

expect_status 0 "trigger of every repository, in JSON" -- "$FDL_MIRROR" trigger --config "$work/cli.yaml" --json
"$python" - "$work/out" <<'PY' && pass || fail "the JSON answer does not name both passes as started: $(cat "$work/out")"
import json, sys
answer = json.load(open(sys.argv[1]))
results = {r["repository"]: r for r in answer["repositories"]}
assert set(results) == {"population", "broken"}, results
for r in results.values():
    assert r["result"] == "started" and r["pass_started_at"].endswith("Z"), r
PY
wait_for_metric 'fdl_mirror_passes_total{repo="broken",result="failed"}' == 2 30 "broken's backoff bypassed"
wait_for_log 10 "the log says who asked" 0 "pass triggered by POST /trigger: it starts now"

expect_status 2 "trigger of an unknown repository" -- "$FDL_MIRROR" trigger --config "$work/cli.yaml" --repository nope
expect_output "no repository 'nope' is configured" "names the repository"

# The endpoint: POST only; a browser page of another site (its Origin) is refused.
[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$(url /trigger)")" = 405 ] && pass ||
  fail "GET /trigger is not 405"
code=$(curl -s -o "$work/body" -w '%{http_code}' --max-time 5 -X POST -H 'Origin: http://evil.example' "$(url /trigger)")
[ "$code" = 403 ] && grep -q "page of another site" "$work/body" && pass ||
  fail "a POST with a foreign Origin answered $code: $(cat "$work/body")"
code=$(curl -s -o "$work/body" -w '%{http_code}' --max-time 5 -X POST -H 'Host: mirror.example.org' "$(url /trigger)")
[ "$code" = 403 ] && pass || fail "a POST naming another host answered $code"
code=$(curl -s -o "$work/body" -w '%{http_code}' --max-time 10 -X POST "$(url '/trigger?repository=population')")
[ "$code" = 200 ] && grep -q '"result":"started"' "$work/body" && pass ||
  fail "POST /trigger?repository=population answered $code: $(cat "$work/body")"

stop_daemon TERM 10
expect_status 69 "trigger with no daemon running" -- "$FDL_MIRROR" trigger --config "$work/cli.yaml"
expect_output "no daemon answers on 127.0.0.1:$daemon_port" "names the address it tried"
finish
