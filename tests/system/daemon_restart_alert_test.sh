# FdlMirrorRestarting on what the real daemon emits (issue 17): four lives of the daemon,
# each scraped once after its first pass, as Prometheus would see a daemon that restarts
# between two scrapes. The pass counters come back above their last value every time (each
# life passes at start), so a rule on their resets() sees nothing; process_start_time_seconds
# changes with each life. The scraped values become a promtool unit test of the shipped
# rules, which must fire.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

sample_config

starts=() pass_counts=()
for life in 1 2 3 4; do
  start_daemon "$work/mirror.yaml"
  wait_for_metric 'fdl_mirror_passes_total{repo="population",result="ok"}' == 1 30 "life $life passed at start"
  starts+=("$(metric process_start_time_seconds)")
  pass_counts+=("$(metric 'fdl_mirror_passes_total{repo="population",result="ok"}')")
  expect_metric 'fdl_mirror_build_info' == 1 "build info in life $life"
  stop_daemon TERM 10
done
echo "start times: ${starts[*]}; passes: ${pass_counts[*]}"
distinct=$(printf '%s\n' "${starts[@]}" | sort -u | wc -l)
[ "$distinct" -eq 4 ] && pass || fail "process_start_time_seconds took $distinct values over four lives"
[ "$(printf '%s\n' "${pass_counts[@]}" | sort -u)" = 1 ] && pass ||
  fail "the pass counter was not 1 at each scrape (${pass_counts[*]}): the gap this rule closes did not show"
less_than "$(awk -v s="${starts[0]}" 'BEGIN { print (systime() - s) }')" 600 && pass ||
  fail "the first life's start time ${starts[0]} is not within the last 10 minutes"

# One scrape a minute: the four lives, then the last one for six more minutes.
rules_test_preamble "$work/alerts/restarts.test.yml"
cat >>"$work/alerts/restarts.test.yml" <<YAML
      - series: 'process_start_time_seconds{job="fdl-mirror",instance="mirror-1:9464"}'
        values: '${starts[0]} ${starts[1]} ${starts[2]} ${starts[3]}x6'
      - series: 'fdl_mirror_passes_total{job="fdl-mirror",instance="mirror-1:9464",repo="population",result="ok"}'
        values: '${pass_counts[0]} ${pass_counts[1]} ${pass_counts[2]} ${pass_counts[3]}x6'
      - series: 'fdl_mirror_build_info{job="fdl-mirror",instance="mirror-1:9464"}'
        values: '1x9'
    alert_rule_test:
      - eval_time: 2m
        alertname: FdlMirrorRestarting
        exp_alerts: []
      - eval_time: 3m
        alertname: FdlMirrorRestarting
        exp_alerts:
          - exp_labels:
              severity: warning
              job: fdl-mirror
              instance: mirror-1:9464
            exp_annotations:
              summary: "fdl-mirror on mirror-1:9464 restarted 3 times in the last hour"
              description: "fdl-mirror on mirror-1:9464 has restarted 3 times in the last hour: it is crashing, missing its watchdog, or being restarted by hand."
              runbook_url: docs/operations.md#fdlmirrorrestarting
YAML
expect_rules_test "$work/alerts/restarts.test.yml" "the shipped rules fire on the real daemon's restarts"
finish
