# The daemon's scheduled audits (issue 17). (a) Passes are quick between full rechecks: an
# unchanged HTTP origin costs 3 conditional requests a pass, and a change to a published
# version (a file deleted at the origin) is seen at the next full recheck, every
# recheck_interval. (b) The scrub reads the mirror's data files again, a slice per
# scrub_interval, a round per scrub_period: a byte flipped in the mirror is found, counted,
# logged and shown by status, and FdlMirrorScrubFinding fires on what the daemon emitted.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

"$FDL_PUBLISHER" sample "$work/www/served" >/dev/null
"$FDL_PUBLISHER" sample "$work/rechecked-origin" >/dev/null
"$FDL_PUBLISHER" sample "$work/scrubbed-origin" >/dev/null
"$FDL_PUBLISHER" sample "$work/www/checked" >/dev/null
start_nginx "$work/www"
cat >"$work/mirror.yaml" <<YAML
listen: 127.0.0.1:0
state_dir: $work/state
shutdown_timeout: 5s
defaults: { interval: 1s, jitter: 0%, signatures: off, scrub_period: 0s }
repositories:
  - name: served
    origin: http://127.0.0.1:$nginx_port/served/
    mirror: $work/served-mirror
    recheck_interval: 1h
  - name: rechecked
    origin: $work/rechecked-origin
    mirror: $work/rechecked-mirror
    recheck_interval: 4s
  - name: checked
    origin: http://127.0.0.1:$nginx_port/checked/
    mirror: $work/checked-mirror
    origin_check_interval: 1s
  - name: scrubbed
    origin: $work/scrubbed-origin
    mirror: $work/scrubbed-mirror
    scrub_interval: 1s
    scrub_period: 3s
stores:
  - { match: "http://127.0.0.1:$nginx_port/", allow_plain_http: true }
YAML
start_daemon "$work/mirror.yaml"
for repo in served rechecked checked scrubbed; do
  wait_for_metric "fdl_mirror_ref_in_sync{repo=\"$repo\",ref=\"refs/heads/main\"}" == 1 30 "$repo mirrored"
done

# --- (a) quick passes: 3 conditional requests each, no full recheck within the hour ---------
origin_requests() { query list 'fdl_mirror_requests_total{repo="served",store="origin"}' | awk '{ n += $NF } END { print n + 0 }'; }
ok_passes() { metric 'fdl_mirror_passes_total{repo="served",result="ok"}'; }
scrape
first_recheck=$(metric 'fdl_mirror_last_full_recheck_timestamp_seconds{repo="served"}')
less_than 0 "$first_recheck" && pass || fail "the first pass was no full recheck ($first_recheck)"
requests_before=$(origin_requests) passes_before=$(ok_passes)
wait_for_metric 'fdl_mirror_passes_total{repo="served",result="ok"}' '>=' "$((passes_before + 4))" 20 "four more passes of served"
requests_after=$(origin_requests) passes_after=$(ok_passes)
made=$((passes_after - passes_before)) asked=$((requests_after - requests_before))
echo "served: $asked origin requests in $made quick passes"
# Each pass asks fdl.json, HEAD and refs.json, conditionally; a pass in flight at a scrape adds up to 3.
[ "$asked" -ge $((3 * made)) ] && [ "$asked" -le $((3 * made + 3)) ] && pass ||
  fail "quick passes cost $asked origin requests in $made passes, want 3 a pass"
expect_metric 'fdl_mirror_requests_total{repo="served",store="origin",method="GET",code="304"}' '>=' $((3 * made)) \
  "the quick passes' requests are answered 304"
expect_metric 'fdl_mirror_last_full_recheck_timestamp_seconds{repo="served"}' == "$first_recheck" \
  "no full recheck within recheck_interval"

# --- (a) a published version changed at the origin: seen at the next full recheck ----------
version=$(ref_of "$work/rechecked-origin" refs/tags/v1)
doomed=$(cd "$work/rechecked-origin/versions/$version" && ls | grep -v -e '^version.json$' -e '\.duckdb$' | head -1)
[ -n "$doomed" ] || fail "the tagged version has no file to delete"
scrape
recheck_before=$(metric 'fdl_mirror_last_full_recheck_timestamp_seconds{repo="rechecked"}')
rm "$work/rechecked-origin/versions/$version/$doomed"
wait_for_metric 'fdl_mirror_immutability_violations_total{repo="rechecked",kind="file_deleted_at_origin"}' '>=' 1 15 \
  "the deleted file seen by a full recheck"
expect_metric 'fdl_mirror_last_full_recheck_timestamp_seconds{repo="rechecked"}' '>' "$recheck_before" "a full recheck ran since"
# A full recheck that sees it holds the pass; a quick one does not look, and passes ok.
rechecked_passes() {
  scrape && echo $(($(metric 'fdl_mirror_passes_total{repo="rechecked",result="held"}') +
    $(metric 'fdl_mirror_passes_total{repo="rechecked",result="ok"}')))
}
wait_until 30 "twelve passes of rechecked" '[ "$(rechecked_passes)" -ge 12 ]'
all=$(rechecked_passes)
violations=$(metric 'fdl_mirror_immutability_violations_total{repo="rechecked",kind="file_deleted_at_origin"}')
echo "rechecked: the violation counted $violations times in $all passes"
less_than "$violations" "$((all / 2))" && pass || fail "the violation was counted by $violations of $all passes: quick passes recheck too"

# --- (c) the origin's data files, by size, one HEAD each over HTTP ----------------------------
wait_for_metric 'fdl_mirror_last_origin_check_timestamp_seconds{repo="checked"}' '>' 0 15 "the origin's data files checked"
expect_metric 'fdl_mirror_immutability_violations_total{repo="checked",kind="file_deleted_at_origin"}' == 0 "nothing missing at first"
expect_metric 'fdl_mirror_last_origin_check_timestamp_seconds{repo="served"}' == 0 "no origin check where its interval is 0"
heads=$(metric 'fdl_mirror_requests_total{repo="checked",store="origin",method="HEAD",code="200"}')
less_than 2 "$heads" && pass || fail "the origin check asked no data file with HEAD ($heads)"
gone=$(cd "$work/www/checked" && find data -name '*.parquet' | sort | head -1)
grown=$(cd "$work/www/checked" && find data -name '*.parquet' | sort | tail -1)
lines=$(log_length)
rm "$work/www/checked/$gone"
printf 'x' >>"$work/www/checked/$grown"
wait_for_metric 'fdl_mirror_immutability_violations_total{repo="checked",kind="file_deleted_at_origin"}' '>=' 1 15 \
  "a data file deleted at the origin counted"
wait_for_metric 'fdl_mirror_immutability_violations_total{repo="checked",kind="data_file_changed_at_origin"}' '>=' 1 15 \
  "a data file resized at the origin counted"
wait_for_log 5 "the deleted data file named" "$lines" repo=checked "immutability violation: origin: $gone: a data file the mirror copied is gone"
wait_for_log 5 "the resized data file named" "$lines" repo=checked "immutability violation: origin: $grown: the origin now serves"
[ -f "$work/checked-mirror/$gone" ] && pass || fail "the mirror lost its copy of a file the origin deleted"

# --- (b) the scrub ----------------------------------------------------------------------------
wait_for_metric 'fdl_mirror_scrub_round_completed_timestamp_seconds{repo="scrubbed"}' '>' 0 20 "a scrub round completed"
expect_metric 'fdl_mirror_scrub_files_total{repo="scrubbed"}' '>=' 3 "the scrub read the mirror's data files"
expect_metric 'fdl_mirror_scrub_findings_total{repo="scrubbed",kind="sha256_mismatch"}' == 0 "nothing found in a sound mirror"
expect_metric 'fdl_mirror_scrub_period_seconds{repo="scrubbed"}' == 3 "the period exported"
expect_metric 'fdl_mirror_scrub_files_total{repo="served"}' == 0 "no scrub where scrub_period is 0"
findings_before=$(metric 'fdl_mirror_scrub_findings_total{repo="scrubbed",kind="sha256_mismatch"}')
damaged=$(cd "$work/scrubbed-mirror" && find data -name '*.parquet' | sort | head -1)
cp "$work/scrubbed-mirror/$damaged" "$work/pristine.parquet"
"$python" - "$work/scrubbed-mirror/$damaged" <<'PY'
import sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
data[len(data) // 2] ^= 0x20  # same size: only the ledger's digest can tell
open(path, "wb").write(bytes(data))
PY
lines=$(log_length)
wait_for_metric 'fdl_mirror_scrub_findings_total{repo="scrubbed",kind="sha256_mismatch"}' '>=' 1 15 "the flipped byte found"
wait_for_log 5 "the finding logged, naming the file" "$lines" repo=scrubbed "scrub: the mirror's data file no longer matches its ledger" "$damaged"
expect_status 1 "status with a scrub finding" -- "$FDL_MIRROR" status --config "$work/mirror.yaml" --repository scrubbed --json
"$python" -c 'import json, sys
[r] = json.load(open(sys.argv[1]))["repositories"]
s = r["scrub"]
assert r["attention"] is True, r
assert any(sys.argv[2] in f for f in s["findings"]), s
assert s["last_round_completed"] is not None, s' "$work/out" "$damaged" && pass || fail "status does not show the finding: $(cat "$work/out")"
scrape
found=$(metric 'fdl_mirror_scrub_findings_total{repo="scrubbed",kind="sha256_mismatch"}')

# Repaired: the next clean round clears the findings.
cp "$work/pristine.parquet" "$work/scrubbed-mirror/$damaged"
wait_until 20 "a clean round clears the findings" \
  '"$FDL_MIRROR" status --config "$work/mirror.yaml" --repository scrubbed >/dev/null 2>&1'
stop_daemon TERM 10
expect_clean_exit "SIGTERM"

# FdlMirrorScrubFinding on what the daemon emitted: the counter before and after the finding.
rules_test_preamble "$work/alerts/scrub.test.yml"
cat >>"$work/alerts/scrub.test.yml" <<YAML
      - series: 'fdl_mirror_scrub_findings_total{job="fdl-mirror",instance="m:9464",repo="scrubbed",kind="sha256_mismatch"}'
        values: '${findings_before}x5 ${found}x10'
    alert_rule_test:
      - eval_time: 5m
        alertname: FdlMirrorScrubFinding
        exp_alerts: []
      - eval_time: 7m
        alertname: FdlMirrorScrubFinding
        exp_alerts:
          - exp_labels: { severity: critical, job: fdl-mirror, repo: scrubbed, kind: sha256_mismatch }
            exp_annotations:
              summary: "fdl-mirror: a data file of the mirror of scrubbed no longer matches its ledger (sha256_mismatch)"
              description: "fdl-mirror read a data file of the mirror of repository scrubbed again and found it damaged (sha256_mismatch) in the last hour; readers of the mirror may get wrong data. \`fdl-mirror status\` names the file."
              runbook_url: docs/operations.md#fdlmirrorscrubfinding
YAML
expect_rules_test "$work/alerts/scrub.test.yml" "FdlMirrorScrubFinding fires on the real daemon's finding"
finish
