# `fdl-mirror pause` and `resume` (issue 33, section 3): a repository stopped on purpose
# without editing the configuration. The pause lives in the mirror (.fdl-mirror/paused), so
# it holds across a restart; the daemon runs no pass while it is there, says so in status
# and fdl_mirror_paused, and a trigger answers "paused"; resume lets the passes run again.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

sample_config
start_daemon "$work/mirror.yaml"
sed "s/^listen: .*/listen: 127.0.0.1:$daemon_port/" "$work/mirror.yaml" >"$work/cli.yaml"
wait_for_metric 'fdl_mirror_passes_total{repo="population",result="ok"}' == 1 30 "the first pass"
expect_metric 'fdl_mirror_paused{repo="population"}' == 0 "not paused at first"

expect_status 2 "pause of an unknown repository" -- "$FDL_MIRROR" pause --config "$work/cli.yaml" --repository nope
expect_status 2 "pause without a repository" -- "$FDL_MIRROR" pause --config "$work/cli.yaml"
expect_status 0 "pause" -- "$FDL_MIRROR" pause --config "$work/cli.yaml" --repository population \
  --reason "origin migration, ticket OPS-42"
expect_output "population: paused by " "says who paused it"
expect_output "the daemon on this host took it into account now" "the daemon was asked to look"
grep -q '"reason":"origin migration, ticket OPS-42"' "$work/mirror/.fdl-mirror/paused" && pass ||
  fail "the pause object in the mirror lacks the reason: $(cat "$work/mirror/.fdl-mirror/paused" 2>&1)"
wait_for_metric 'fdl_mirror_paused{repo="population"}' == 1 10 "fdl_mirror_paused"
wait_for_log 10 "the log says it is paused, and why" 0 "paused by" "origin migration, ticket OPS-42"

# The origin moves on; a trigger runs no pass while paused.
new=$("$FDL_PUBLISHER" add "$work/origin" main 1000)
expect_status 1 "trigger of a paused repository" -- "$FDL_MIRROR" trigger --config "$work/cli.yaml"
expect_output "population: paused: paused by" "the trigger's answer says paused"
sleep 0.5
expect_metric 'fdl_mirror_passes_total{repo="population",result="ok"}' == 1 "no pass ran while paused"
[ "$(ref_of "$work/mirror" refs/heads/main)" != "$new" ] && pass || fail "a paused repository was mirrored"
expect_status 0 "status of a paused repository" -- "$FDL_MIRROR" status --config "$work/cli.yaml"
expect_output "paused:        since" "status shows the pause"
expect_output "origin migration, ticket OPS-42 (no pass runs until" "with its reason"
curl -fsS --max-time 5 "$(url /status)" >"$work/status.json"
"$python" -c 'import json, sys
[r] = json.load(open(sys.argv[1]))["repositories"]
assert r["paused"]["reason"] == "origin migration, ticket OPS-42" and r["paused"]["by"], r["paused"]' \
  "$work/status.json" && pass || fail "/status lacks the pause: $(cat "$work/status.json")"
[ "$(http_status /readyz)" = 200 ] && pass || fail "a paused repository made the daemon unready"

# A restart does not lift it: the pause is in the mirror, read before the first pass.
stop_daemon TERM 10
start_daemon "$work/cli.yaml"
wait_for_metric 'fdl_mirror_paused{repo="population"}' == 1 10 "still paused after a restart"
sleep 0.5
[ "$(ref_of "$work/mirror" refs/heads/main)" != "$new" ] && pass || fail "mirrored after a restart while paused"

expect_status 0 "resume" -- "$FDL_MIRROR" resume --config "$work/cli.yaml" --repository population
expect_output "population: resumed" "resume says so"
[ ! -e "$work/mirror/.fdl-mirror/paused" ] && pass || fail "resume left the pause object"
wait_for_metric 'fdl_mirror_paused{repo="population"}' == 0 10 "fdl_mirror_paused back to 0"
wait_until 20 "the new version mirrored after resume" '[ "$(ref_of "$work/mirror" refs/heads/main)" = "$new" ]'
wait_for_log 10 "the log says it resumed" 0 "resumed: passes run again"
expect_status 0 "resume of a repository not paused" -- "$FDL_MIRROR" resume --config "$work/cli.yaml" --repository population
stop_daemon TERM 10
finish
