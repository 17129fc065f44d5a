# "Behind since" and "held since" outlive restarts and reason changes (issue 17): a version
# held for a bad data file, then for another reason, across three lives of the daemon. The
# timestamps the daemon exports stay those of the first pass that found the ref behind and
# held the version, so that FdlMirrorBehind and FdlMirrorVersionsHeld (rules on those
# timestamps) fire for a daemon that restarts more often than they wait. The scraped
# values then become a promtool unit test of the shipped rules.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

sample_config
main='fdl_mirror_ref_behind_since_timestamp_seconds{repo="population",ref="refs/heads/main"}'

# Life 1: in sync, so main is not behind.
start_daemon "$work/mirror.yaml"
wait_for_metric 'fdl_mirror_passes_total{repo="population",result="ok"}' == 1 30 "life 1 passed"
expect_metric "$main" == 0 "main in sync: behind since 0"
expect_series 'fdl_mirror_version_held_since_timestamp_seconds' == 0 "nothing held"
stop_daemon TERM 10

# A new main version whose data file is one byte longer than its catalog says.
stage "$work/origin"
held=$("$FDL_PUBLISHER" add "$work/stage" main 1000)
data=$(staged_new_files "$work/origin" | grep '^\./data/')
printf 'x' >>"$work/stage/$data"
install_staged "$work/origin"

# Life 2: held for its size; main behind since this pass.
before=$(date +%s)
start_daemon "$work/mirror.yaml"
wait_for_metric 'fdl_mirror_passes_total{repo="population",result="held"}' == 1 30 "life 2 held the version"
held_by_size="fdl_mirror_version_held_since_timestamp_seconds{repo=\"population\",version=\"$held\",reason=\"size_mismatch\"}"
expect_metric "$held_by_size" '>=' "$before" "held since this life's pass"
expect_metric "$main" '>=' "$before" "main behind since this life's pass"
held_since=$(metric "$held_by_size")
behind_since=$(metric "$main")
stop_daemon TERM 10

# Life 3, later: the data file is gone, so the reason changes.
sleep 1.1
rm "$work/origin/$data"
start_daemon "$work/mirror.yaml"
wait_for_metric 'fdl_mirror_passes_total{repo="population",result="held"}' == 1 30 "life 3 held the version"
expect_series "fdl_mirror_version_held_since_timestamp_seconds{version=\"$held\"}" == 1 "one series for the held version"
reason=$(query list "fdl_mirror_version_held_since_timestamp_seconds{version=\"$held\"}" | sed -n 's/.*reason="\([^"]*\)".*/\1/p')
[ -n "$reason" ] && [ "$reason" != size_mismatch ] && pass || fail "the reason did not change (it is '$reason')"
held_again="fdl_mirror_version_held_since_timestamp_seconds{repo=\"population\",version=\"$held\",reason=\"$reason\"}"
expect_metric "$held_again" == "$held_since" "held since the first hold, across a restart and a new reason"
expect_metric "$main" == "$behind_since" "main behind since the first pass that saw it, across a restart"
expect_metric 'fdl_mirror_ref_lag_seconds{repo="population",ref="refs/heads/main"}' '>=' 1 "the lag counts from then"
stop_daemon TERM 10

# The rules on what the daemon emitted: one sample a minute, time shifted so that the first
# hold happened at minute 1; life 2 for 20 minutes, a restart missing two scrapes, then life 3.
shift=$(awk -v s="$held_since" 'BEGIN { printf "%.3f", s - 60 }')
at() { awk -v v="$1" -v s="$shift" 'BEGIN { printf "%.3f", v - s }'; }
rules_test_preamble "$work/alerts/clocks.test.yml"
cat >>"$work/alerts/clocks.test.yml" <<YAML
      - series: 'fdl_mirror_ref_behind_since_timestamp_seconds{job="fdl-mirror",instance="m:9464",repo="population",ref="refs/heads/main"}'
        values: '_ $(at "$behind_since")x20 _ _ $(at "$behind_since")x60'
      - series: 'fdl_mirror_version_held_since_timestamp_seconds{job="fdl-mirror",instance="m:9464",repo="population",version="$held",reason="size_mismatch"}'
        values: '_ $(at "$held_since")x20'
      - series: 'fdl_mirror_version_held_since_timestamp_seconds{job="fdl-mirror",instance="m:9464",repo="population",version="$held",reason="$reason"}'
        values: '_x23 $(at "$held_since")x60'
    alert_rule_test:
      - eval_time: 30m
        alertname: FdlMirrorVersionsHeld
        exp_alerts: []
      - eval_time: 32m
        alertname: FdlMirrorVersionsHeld
        exp_alerts:
          - exp_labels: { severity: warning, job: fdl-mirror, repo: population, version: "$held", reason: "$reason" }
            exp_annotations:
              summary: "fdl-mirror: population holds back version $held: $reason"
              description: "fdl-mirror has held back version $held of repository population for 31m 0s, for $reason; no ref of the mirror moves to it. \`fdl-mirror status\` shows why."
              runbook_url: docs/operations.md#fdlmirrorversionsheld
      - eval_time: 60m
        alertname: FdlMirrorBehind
        exp_alerts: []
      - eval_time: 62m
        alertname: FdlMirrorBehind
        exp_alerts:
          - exp_labels: { severity: warning, job: fdl-mirror, repo: population, ref: refs/heads/main }
            exp_annotations:
              # Both clocks started in the same pass: behind for as long as held.
              summary: "fdl-mirror: population refs/heads/main is 1h 1m 0s behind its origin"
              description: "The origin of repository population has had a version of refs/heads/main that the mirror lacks for 1h 1m 0s."
              runbook_url: docs/operations.md#fdlmirrorbehind
YAML
expect_rules_test "$work/alerts/clocks.test.yml" "FdlMirrorVersionsHeld and FdlMirrorBehind fire on the real daemon's clocks"
finish
