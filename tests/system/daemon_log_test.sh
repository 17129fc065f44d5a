# The daemon's log (issue 17), three ways: plain to a file (each line with its time and
# level), JSON to a file (each line one JSON object, no prefix, with structured fields for
# the repository, version, ref, counts, durations and error kind), and plain to journald's
# stream ($JOURNAL_STREAM naming stderr: the sd-daemon priority prefix, no time). At level
# debug, debug lines exist.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

"$FDL_PUBLISHER" sample "$work/origin" >/dev/null
config() { # config FORMAT LEVEL
  cat >"$work/mirror.yaml" <<YAML
listen: 127.0.0.1:0
state_dir: $work/state
log: { format: $1, level: $2 }
defaults: { interval: 1h, signatures: off }
repositories:
  - { name: population, origin: $work/origin, mirror: $work/mirror }
  - { name: broken, origin: $work/no-such-origin, mirror: $work/broken-mirror }
YAML
}

# --- plain, to a file, at debug ----------------------------------------------------------------
config plain debug
start_daemon "$work/mirror.yaml"
wait_for_log 30 "population's pass" 0 repo=population 'pass ok'
wait_for_log 10 "broken's pass" 0 repo=broken 'pass failed'
stop_daemon TERM 10
if grep -vE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z (debug|info|notice|warning|error) ' \
  "$daemon_log" >"$work/bad"; then
  fail "plain lines without a time and a level: $(head -n 3 "$work/bad")"
else pass; fi
grep -q ' debug repo=population pass started: full recheck of the published versions$' "$daemon_log" && pass ||
  fail "no debug line saying how the pass starts"
grep -q ' debug repo=population origin opened: ' "$daemon_log" && pass || fail "no debug line for the opened origin"
grep -q ' error repo=broken pass failed in ' "$daemon_log" && pass || fail "the failed pass is not an error line"
first=$(head -n 1 "$daemon_log" | cut -d' ' -f1)
less_than "$(date -u -d "$first" +%s)" "$(($(date +%s) + 2))" && less_than "$(($(date +%s) - 120))" "$(date -u -d "$first" +%s)" &&
  pass || fail "the first line's time '$first' is not now"

# --- JSON, to a file ----------------------------------------------------------------------------
config json info
rm -rf "$work/mirror" "$work/state"
start_daemon "$work/mirror.yaml"
wait_for_log 30 "population's pass" 0 '"repo":"population"' '"message":"pass ok'
wait_for_log 10 "broken's pass" 0 '"repo":"broken"' '"message":"pass failed'
stop_daemon TERM 10
"$python" - "$daemon_log" <<'PY' && pass || fail "the JSON log is not what readers need"
import json, sys, datetime
events = []
for n, line in enumerate(open(sys.argv[1]), 1):
    assert line.startswith("{"), f"line {n} does not start a JSON object: {line!r}"
    event = json.loads(line)
    datetime.datetime.strptime(event["time"], "%Y-%m-%dT%H:%M:%S.%fZ")
    assert event["level"] in ("info", "notice", "warning", "error"), event
    assert "message" in event, event
    events.append(event)
summary = [e for e in events if e.get("repo") == "population" and e["message"].startswith("pass ok")]
assert len(summary) == 1, summary
s = summary[0]
assert s["outcome"] == "ok" and s["versions_published"] == 4 and s["files_copied"] > 0, s
assert s["bytes_copied"] > 0 and s["refs"] == 3 and s["refs_in_sync"] == 3, s
assert isinstance(s["duration_seconds"], float) and "error_kind" not in s, s
refs = [e for e in events if e.get("ref") == "refs/heads/main"]
assert refs and refs[0]["to"] and refs[0]["from"] == "", refs
published = [e for e in events if e["message"] == "published"]
assert len(published) == 4 and all(len(e["version"]) == 36 for e in published), published
failed = [e for e in events if e.get("repo") == "broken" and e["message"].startswith("pass failed")]
assert failed and failed[0]["level"] == "error" and failed[0]["outcome"] == "failed", failed
assert failed[0]["error_kind"], failed
PY

# --- plain, to journald's stream ----------------------------------------------------------------
config plain info
rm -rf "$work/mirror" "$work/state"
next_log=$work/daemon-$((daemon_runs + 1)).log
: >"$next_log"
stream=$(stat -c '%d:%i' "$next_log")
start_daemon "$work/mirror.yaml" JOURNAL_STREAM="$stream"
wait_for_log 30 "population's pass" 0 '<6>repo=population pass ok'
stop_daemon TERM 10
if grep -vE '^<[0-7]>' "$daemon_log" >"$work/bad"; then
  fail "journald lines without an sd-daemon prefix: $(head -n 3 "$work/bad")"
else pass; fi
grep -qE '^<[0-7]>[0-9]{4}-' "$daemon_log" && fail "journald lines carry a time the journal has" || pass
grep -q '^<3>repo=broken pass failed' "$daemon_log" && pass || fail "the failed pass is not priority 3"
finish
