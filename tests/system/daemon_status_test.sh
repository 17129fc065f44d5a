# `fdl-mirror status` and the daemon's /status (issue 17): per repository the last result
# and its time, the last error, held versions with ids and reasons, refs with their lag,
# the next pass. The same from the running daemon (/status), from state_dir while it runs,
# and after it has stopped; exit 1 when a repository calls for attention.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

sample_config "- { name: broken, origin: $work/no-such-origin, mirror: $work/broken-mirror }"

# Before the daemon ever ran: nothing recorded, nothing to attend to.
expect_status 0 "status before any run" -- "$FDL_MIRROR" status --config "$work/mirror.yaml"
expect_output "population: no pass recorded yet" "each repository listed"
expect_output "no state yet" "the missing state_dir noted"

# A held version: a new main whose data file is larger than its catalog says.
"$FDL_MIRROR" sync "$work/origin" "$work/mirror" >/dev/null
stage "$work/origin"
held=$("$FDL_PUBLISHER" add "$work/stage" main 1000)
data=$(staged_new_files "$work/origin" | grep '^\./data/')
printf 'x' >>"$work/stage/$data"
install_staged "$work/origin"

before=$(date +%s)
start_daemon "$work/mirror.yaml"
wait_for_metric 'fdl_mirror_passes_total{repo="population",result="held"}' == 1 30 "population held"
wait_for_metric 'fdl_mirror_passes_total{repo="broken",result="failed"}' == 1 30 "broken failed"
curl -fsS --max-time 5 "$(url /status)" >"$work/live.json" && pass || fail "GET /status failed"

# check_status FILE SOURCE: the facts both repositories' status must show.
check_status() {
  "$python" - "$1" "$2" "$held" "$before" <<'PY' && pass || fail "$1: status does not show what the passes found"
import json, sys, time
path, source, held, before = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
s = json.load(open(path))
assert s["source"] == source, s["source"]
assert abs(s["time"] - time.time()) < 60, s["time"]
repos = {r["name"]: r for r in s["repositories"]}
assert list(repos) == ["population", "broken"], list(repos)
p, b = repos["population"], repos["broken"]
assert p["last_result"] == "held" and p["attention"] is True, p
assert p["last_error"] is None and p["consecutive_failures"] == 0, p
assert p["last_finished"] >= before and p["last_success"] == p["last_finished"], p
assert p["next_pass"] > p["last_finished"] + 3000, p  # interval: 1h, jitter 10 %
[h] = p["held"]
assert h["version"] == held and h["reason"] == "size_mismatch", h
assert "size is more than 1000 bytes" in h["message"] and h["since"] >= before, h
refs = {r["name"]: r for r in p["refs"]}
main = refs["refs/heads/main"]
assert main["origin"] == held and main["mirror"] != held and not main["in_sync"], main
assert main["versions_behind"] == 1 and main["behind_since"] == h["since"], main
assert main["lag_seconds"] >= 0, main
assert refs["refs/tags/v1"]["in_sync"] and refs["refs/tags/v1"]["behind_since"] is None, refs
assert b["last_result"] == "failed" and b["attention"] is True, b
assert "no-such-origin" in b["last_error"] and b["consecutive_failures"] == 1 and b["last_success"] is None, b
assert b["refs"] == [] and b["held"] == [], b
PY
}
check_status "$work/live.json" daemon

# The command, while the daemon runs: from state_dir, the same facts.
expect_status 1 "status with a held version and a failing repository" -- \
  "$FDL_MIRROR" status --config "$work/mirror.yaml" --json
cp "$work/out" "$work/from-state.json"
check_status "$work/from-state.json" state_dir
expect_status 1 "status as text" -- "$FDL_MIRROR" status --config "$work/mirror.yaml"
expect_output "population: last pass held at" "the last result and its time"
expect_output "held $held since" "the held version, by its full id"
expect_output "size_mismatch: " "the held version's reason"
expect_output "ref refs/heads/main: behind for" "the ref behind, with its lag"
expect_output "ref refs/tags/v1: in sync at" "a ref in sync"
expect_output "broken: last pass failed at" "the failing repository"
expect_output "last error:" "its last error"
expect_output "next pass:" "the next pass"
stop_daemon TERM 10

# After the daemon stopped, and for one repository only.
expect_status 1 "status of the held repository after a stop" -- \
  "$FDL_MIRROR" status --config "$work/mirror.yaml" --repository population --json
"$python" -c 'import json, sys
s = json.load(open(sys.argv[1])); a = json.load(open(sys.argv[2]))
[p] = s["repositories"]
[q] = [r for r in a["repositories"] if r["name"] == "population"]
assert p["held"] == q["held"] and p["last_finished"] == q["last_finished"], (p, q)' "$work/out" "$work/from-state.json" &&
  pass || fail "status after the stop differs from the one while it ran"
expect_status 2 "an unknown repository" -- "$FDL_MIRROR" status --config "$work/mirror.yaml" --repository nope
expect_output "no repository named 'nope'" "the unknown name said"

# Repaired, the next life is all ok: exit 0.
truncate -s 1000 "$work/origin/$data"
sed -i '/name: broken/d' "$work/mirror.yaml"
start_daemon "$work/mirror.yaml"
wait_for_metric 'fdl_mirror_passes_total{repo="population",result="ok"}' == 1 30 "population mirrored"
stop_daemon TERM 10
expect_status 0 "status once all is mirrored" -- "$FDL_MIRROR" status --config "$work/mirror.yaml"
expect_output "population: last pass ok" "the ok pass"

# Someone breaks the file: status still shows what the state folder holds, and says so.
cp "$work/mirror.yaml" "$work/broken.yaml"
echo "  - { name: typo, interval: soon" >>"$work/broken.yaml"
# (exit 1: the folder still holds 'broken', which failed, from the first run)
expect_status 1 "status with a configuration that does not load" -- "$FDL_MIRROR" status --config "$work/broken.yaml"
expect_output "has problems (above); the daemon runs the configuration it last loaded" "says the file is broken"
expect_output "population: last pass ok" "shows the repositories of the state folder"
printf 'not: [yaml\n' >"$work/garbage.yaml"
expect_status 78 "status with a file that names no state folder that has any state" -- \
  "$FDL_MIRROR" status --config "$work/garbage.yaml"
finish
