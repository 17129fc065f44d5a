# SIGHUP rereads the configuration. A broken file is refused, logged as an error with its
# file:line:col, and the old configuration runs on (metrics served, passes going on, nothing of
# the broken file in force). A good file takes effect: a repository added gets its series and
# is mirrored, one removed loses every series and is mirrored no more, one unchanged keeps its
# counters and its passes. And a second daemon on the same state folder is refused (exit 73)
# while the first runs on.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

for repo in alpha beta gamma; do "$FDL_PUBLISHER" sample "$work/$repo-origin"; done
header="listen: 127.0.0.1:0
state_dir: $work/state
shutdown_timeout: 5s
defaults: { interval: 1s, jitter: 0%, signatures: off }
repositories:"
repository() { printf '  - name: %s\n    origin: %s\n    mirror: %s\n' "$1" "$work/$1-origin" "$work/$1-mirror"; }
{ echo "$header"; repository alpha; repository beta; } >"$work/mirror.yaml"

start_daemon "$work/mirror.yaml"
wait_for_metric 'fdl_mirror_ref_in_sync{repo="alpha",ref="refs/heads/main"}' == 1 30 "alpha mirrored"
wait_for_metric 'fdl_mirror_ref_in_sync{repo="beta",ref="refs/heads/main"}' == 1 30 "beta mirrored"
expect_metric 'fdl_mirror_repositories' == 2 "two repositories at start"
# The reload outcome series exist from the start: 1 (the running configuration is the file's).
expect_metric 'fdl_mirror_config_reload_success' == 1 "reload success 1 at start"
expect_metric 'fdl_mirror_config_reload_timestamp_seconds' == 0 "no reload yet"

# --- a broken file: refused, the old configuration runs on ---------------------------------------
# gamma added, with an interval that is not a duration: its value is at column 15.
{ echo "$header"; repository alpha; repository beta; repository gamma; echo "    interval: soon"; } >"$work/mirror.yaml"
bad_line=$(grep -n 'interval: soon' "$work/mirror.yaml" | cut -d: -f1)
scrape
ok=$(metric 'fdl_mirror_passes_total{repo="alpha",result="ok"}')
lines=$(log_length)
kill -HUP "$daemon_pid"
wait_for_log 10 "the refused reload logged as an error naming the problem at file:line:col" "$lines" \
  ' error ' 'reload refused' "$work/mirror.yaml:$bad_line:15: " "interval 'soon'"
running "$daemon_pid" && pass || fail "the daemon exited on a broken configuration"
scrape
expect_metric 'fdl_mirror_config_reload_success' == 0 "a refused reload sets the success gauge to 0"
# /status says so too, with the problems, and what this daemon is to each repository.
curl -fsS --max-time 5 "$(url /status)" >"$work/status.json"
"$python" - "$work/status.json" "interval 'soon'" <<'PY' && pass || fail "/status lacks the refused reload: $(cat "$work/status.json")"
import json, sys
s = json.load(open(sys.argv[1]))
reload = s["last_reload"]
assert reload["result"] == "refused" and reload["at"] > 0, reload
assert any(sys.argv[2] in p for p in reload["problems"]), reload
assert {r["name"]: r["role"] for r in s["repositories"]} == {"alpha": "alone", "beta": "alone"}, s["repositories"]
PY
# The shipped rule on the value the daemon now exports, held for ten minutes.
rules_test_preamble "$work/alerts/reload.test.yml"
cat >>"$work/alerts/reload.test.yml" <<YAML
      - series: 'fdl_mirror_config_reload_success{job="fdl-mirror",instance="mirror-1:9464"}'
        values: '$(metric 'fdl_mirror_config_reload_success')x10'
    alert_rule_test:
      - eval_time: 4m
        alertname: FdlMirrorReloadRefused
        exp_alerts: []
      - eval_time: 6m
        alertname: FdlMirrorReloadRefused
        exp_alerts:
          - exp_labels: { severity: warning, job: fdl-mirror, instance: "mirror-1:9464" }
            exp_annotations:
              summary: "fdl-mirror on mirror-1:9464 refused its new configuration"
              description: "fdl-mirror on mirror-1:9464 refused the configuration file at its last reload and runs the configuration it had: the file on disk is not in force."
              runbook_url: docs/operations.md#fdlmirrorreloadrefused
YAML
expect_rules_test "$work/alerts/reload.test.yml" "the shipped rules fire FdlMirrorReloadRefused on the real daemon's value"
refused_at=$(metric 'fdl_mirror_config_reload_timestamp_seconds')
less_than "$(awk -v t="$refused_at" 'BEGIN { print (systime() - t) }')" 30 && pass ||
  fail "the reload timestamp $refused_at is not the refused reload's"
[ "$(http_status /readyz)" = 200 ] && pass || fail "/readyz is not 200 after a refused reload"
wait_for_metric 'fdl_mirror_passes_total{repo="alpha",result="ok"}' '>' "$ok" 10 "alpha's passes go on"
scrape
ok=$(metric 'fdl_mirror_passes_total{repo="beta",result="ok"}')
wait_for_metric 'fdl_mirror_passes_total{repo="beta",result="ok"}' '>' "$ok" 10 "beta's passes go on"
expect_metric 'fdl_mirror_repositories' == 2 "still two repositories"
expect_series '{repo="gamma"}' == 0 "no series of the refused file's repository"
[ ! -e "$work/gamma-mirror" ] && pass || fail "the refused file's repository was mirrored"

# --- a good file: gamma added, beta removed, alpha unchanged ----------------------------------------
{ echo "$header"; repository alpha; repository gamma; } >"$work/mirror.yaml"
scrape
alpha_ok=$(metric 'fdl_mirror_passes_total{repo="alpha",result="ok"}')
alpha_files=$(metric 'fdl_mirror_copied_files_total{repo="alpha"}')
beta_main=$(ref_of "$work/beta-mirror" refs/heads/main)
lines=$(log_length)
kill -HUP "$daemon_pid"
wait_for_metric 'fdl_mirror_ref_in_sync{repo="gamma",ref="refs/heads/main"}' == 1 30 "the added repository is mirrored"
expect_metric 'fdl_mirror_repositories' == 2 "two repositories after the reload"
expect_metric 'fdl_mirror_passes_total{repo="gamma",result="ok"}' '>=' 1 "the added repository's passes counted"
expect_metric 'fdl_mirror_passes_total{repo="gamma",result="failed"}' == 0 "the added repository's series made at 0"
expect_status 0 "the added repository's mirror is consistent" -- "$FDL_MIRROR" verify "$work/gamma-mirror"
wait_for_series '{repo="beta"}' 0 10 "the removed repository loses every series"
[ "$(log_lines_with "$lines" 'reload refused')" -eq 0 ] && pass || fail "the good file was refused: $(tail -n 5 "$daemon_log")"
expect_metric 'fdl_mirror_config_reload_success' == 1 "a good reload sets the success gauge back to 1"
expect_metric 'fdl_mirror_config_reload_timestamp_seconds' '>=' "$refused_at" "the good reload's time"
# alpha was not disturbed: its counters go on from where they were, its passes too.
expect_metric 'fdl_mirror_passes_total{repo="alpha",result="ok"}' '>=' "$alpha_ok" "alpha's counters kept"
expect_metric 'fdl_mirror_copied_files_total{repo="alpha"}' == "$alpha_files" "alpha's traffic counter kept"
scrape
ok=$(metric 'fdl_mirror_passes_total{repo="alpha",result="ok"}')
wait_for_metric 'fdl_mirror_passes_total{repo="alpha",result="ok"}' '>' "$ok" 10 "alpha's passes go on"

# beta is mirrored no more: a new version at its origin stays there while alpha and gamma pass.
"$FDL_PUBLISHER" add "$work/beta-origin" main 1000 >/dev/null
scrape
ok=$(metric 'fdl_mirror_passes_total{repo="gamma",result="ok"}')
beta_lines=$(log_lines_with 0 repo=beta)
wait_for_metric 'fdl_mirror_passes_total{repo="gamma",result="ok"}' '>=' "$((ok + 2))" 15 "two more passes of gamma"
[ "$(ref_of "$work/beta-mirror" refs/heads/main)" = "$beta_main" ] && pass || fail "the removed repository was still mirrored"
[ "$(log_lines_with 0 repo=beta)" -eq "$beta_lines" ] && pass || fail "the removed repository still logs: $(grep repo=beta "$daemon_log" | tail -n 3)"
expect_series '{repo="beta"}' == 0 "the removed repository has no series"

# --- a second daemon on the same state_dir: refused before it binds or writes anything ------------
second=0
timeout 20 "$FDL_MIRROR" run --config "$work/mirror.yaml" >"$work/second.out" 2>"$work/second.log" || second=$?
[ "$second" = 73 ] && pass || fail "a second daemon on the same state_dir exited $second, want 73: $(cat "$work/second.log")"
grep -qF "$work/state: another fdl-mirror run uses this state folder" "$work/second.log" && pass ||
  fail "the refusal does not name the state folder: $(cat "$work/second.log")"
grep -q 'listening on' "$work/second.log" && fail "the refused daemon listened" || pass
running "$daemon_pid" && pass || fail "the first daemon exited when a second one was started"
scrape
ok=$(metric 'fdl_mirror_passes_total{repo="alpha",result="ok"}')
wait_for_metric 'fdl_mirror_passes_total{repo="alpha",result="ok"}' '>' "$ok" 10 "the first daemon's passes go on"

stop_daemon TERM 10
expect_clean_exit "SIGTERM after reloads"
finish
