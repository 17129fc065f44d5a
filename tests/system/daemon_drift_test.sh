# The daemon at work (`fdl-mirror run`), seen through /metrics: two folder repositories
# mirrored every second; a clean new version follows; a version held for a bad data file
# makes drift appear (ref out of sync, versions behind, lag growing, versions_held, passes
# held) and a repaired origin clears it; a moved tag and a rewritten version count as
# immutability violations of their repository alone; timestamps and counters advance; the
# exposition passes promtool check metrics.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

"$FDL_PUBLISHER" sample "$work/alpha-origin"
"$FDL_PUBLISHER" sample "$work/beta-origin"
# What one `sync` of the same repository copies, for the daemon's traffic counters.
"$FDL_MIRROR" sync "$work/alpha-origin" "$work/reference-mirror" --json >"$work/reference.json" 2>/dev/null
read -r reference_files reference_bytes < <("$python" -c 'import json, sys
r = json.load(open(sys.argv[1])); print(r["files_copied"], r["bytes_copied"])' "$work/reference.json")

cat >"$work/mirror.yaml" <<YAML
listen: 127.0.0.1:0
state_dir: state/daemon
shutdown_timeout: 5s
defaults: { interval: 1s, jitter: 0%, signatures: off, recheck_interval: 0s }  # every pass a full recheck
repositories:
  - name: alpha
    origin: alpha-origin
    mirror: $work/alpha-mirror
  - name: beta
    origin: file://$work/beta-origin
    mirror: beta-mirror
YAML
started=$(date +%s)
start_daemon "$work/mirror.yaml"
# state_dir is relative to the configuration's folder, and made when missing.
wait_until 10 "state_dir made relative to the configuration" '[ -d "$work/state/daemon" ]'

[ "$(http_status /healthz)" = 200 ] && pass || fail "/healthz answers $(http_status /healthz), want 200"
wait_until 10 "/readyz answers 200" '[ "$(http_status /readyz)" = 200 ]'
[ "$(http_status /no-such-page)" != 200 ] && pass || fail "/no-such-page answers 200"

# --- the first passes: both repositories in sync ------------------------------------------
wait_for_metric 'fdl_mirror_ref_in_sync{repo="alpha",ref="refs/heads/main"}' == 1 30 "alpha mirrored"
wait_for_metric 'fdl_mirror_ref_in_sync{repo="beta",ref="refs/heads/main"}' == 1 30 "beta mirrored"
expect_metric 'fdl_mirror_repositories' == 2 "two repositories configured"
expect_metric 'fdl_mirror_build_info' == 1 "build info"
expect_metric 'fdl_mirror_interval_seconds{repo="alpha"}' == 1 "alpha's interval"
for ref in refs/heads/main refs/heads/dev refs/tags/v1; do
  expect_metric "fdl_mirror_ref_in_sync{repo=\"alpha\",ref=\"$ref\"}" == 1 "$ref in sync"
  expect_metric "fdl_mirror_ref_versions_behind{repo=\"alpha\",ref=\"$ref\"}" == 0 "$ref not behind"
  expect_metric "fdl_mirror_ref_lag_seconds{repo=\"alpha\",ref=\"$ref\"}" == 0 "$ref without lag"
done
expect_series 'fdl_mirror_ref_in_sync{repo="alpha"}' == 3 "one drift series per origin ref"
expect_metric 'fdl_mirror_passes_total{repo="alpha",result="ok"}' '>=' 1 "an ok pass counted"
for result in held failed timeout; do
  expect_metric "fdl_mirror_passes_total{repo=\"alpha\",result=\"$result\"}" == 0 "no $result pass (series made at 0)"
done
expect_metric 'fdl_mirror_last_success_timestamp_seconds{repo="alpha"}' '>=' "$started" "last success is a unix time of this run"
expect_metric 'fdl_mirror_last_success_timestamp_seconds{repo="alpha"}' '<=' "$(($(date +%s) + 1))" "last success is not in the future"
expect_metric 'fdl_mirror_last_attempt_timestamp_seconds{repo="alpha"}' '>=' "$started" "last attempt is a unix time of this run"
expect_metric 'fdl_mirror_origin_up{repo="alpha"}' == 1 "alpha's origin up"
expect_metric 'fdl_mirror_pending_files{repo="alpha"}' == 0 "nothing pending"
expect_series 'fdl_mirror_requests_total{repo="alpha"}' == 0 "a folder store makes no HTTP request"
expect_metric 'fdl_mirror_copied_files_total{repo="alpha"}' == "$reference_files" "files copied, as many as sync copies"
expect_metric 'fdl_mirror_copied_bytes_total{repo="alpha"}' == "$reference_bytes" "bytes copied, as many as sync copies"
expect_status 0 "alpha's mirror is consistent" -- "$FDL_PUBLISHER" check "$work/alpha-mirror"
expect_status 0 "fdl-mirror verify alpha's mirror" -- "$FDL_MIRROR" verify "$work/alpha-mirror"
if diff -r -x refs.json -x .fdl-mirror "$work/alpha-origin" "$work/alpha-mirror" >/dev/null; then pass; else
  fail "alpha's mirror differs from its origin"
fi
[ "$(log_lines_with 0 repo=alpha 'pass ok')" -ge 1 ] && pass || fail "no 'repo=alpha … pass ok' line logged"

# --- timestamps and counters advance ---------------------------------------------------------
scrape
success=$(metric 'fdl_mirror_last_success_timestamp_seconds{repo="alpha"}')
attempt=$(metric 'fdl_mirror_last_attempt_timestamp_seconds{repo="alpha"}')
ok=$(metric 'fdl_mirror_passes_total{repo="alpha",result="ok"}')
wait_for_metric 'fdl_mirror_last_attempt_timestamp_seconds{repo="alpha"}' '>' "$attempt" 10 "last attempt advances"
wait_for_metric 'fdl_mirror_last_success_timestamp_seconds{repo="alpha"}' '>' "$success" 10 "last success advances"
wait_for_metric 'fdl_mirror_passes_total{repo="alpha",result="ok"}' '>' "$ok" 10 "ok passes counted"

# --- a clean new version reaches the mirror --------------------------------------------------
scrape
files=$(metric 'fdl_mirror_copied_files_total{repo="alpha"}')
stage "$work/alpha-origin"
clean=$("$FDL_PUBLISHER" add "$work/stage" dev 5000)
install_staged "$work/alpha-origin"
wait_until 15 "the new dev version reaches the mirror" '[ "$(ref_of "$work/alpha-mirror" refs/heads/dev)" = "$clean" ]'
wait_for_metric 'fdl_mirror_copied_files_total{repo="alpha"}' '>' "$files" 10 "the new version's files counted"
wait_for_metric 'fdl_mirror_ref_in_sync{repo="alpha",ref="refs/heads/dev"}' == 1 10 "dev in sync again"

# --- drift appears: a new main version whose data file is larger than its catalog says -------
scrape
held_passes=$(metric 'fdl_mirror_passes_total{repo="alpha",result="held"}')
old_main=$(ref_of "$work/alpha-mirror" refs/heads/main)
stage "$work/alpha-origin"
held=$("$FDL_PUBLISHER" add "$work/stage" main 1000)
data=$(staged_new_files "$work/alpha-origin" | grep '^\./data/')
printf 'x' >>"$work/stage/$data"
lines=$(log_length)
install_staged "$work/alpha-origin"
wait_for_metric 'fdl_mirror_versions_held{repo="alpha",reason="size_mismatch"}' == 1 15 "the held version counted by reason"
wait_for_metric 'fdl_mirror_ref_in_sync{repo="alpha",ref="refs/heads/main"}' == 0 10 "drift appears"
expect_metric 'fdl_mirror_ref_versions_behind{repo="alpha",ref="refs/heads/main"}' == 1 "one version behind"
expect_metric 'fdl_mirror_ref_in_sync{repo="alpha",ref="refs/heads/dev"}' == 1 "dev still in sync"
expect_metric 'fdl_mirror_passes_total{repo="alpha",result="held"}' '>' "$held_passes" "held passes counted"
expect_metric 'fdl_mirror_integrity_failures_total{repo="alpha",kind="size_mismatch"}' '>=' 1 "an integrity failure counted"
expect_metric 'fdl_mirror_pending_files{repo="alpha"}' == 1 "the held version's data file pending"
expect_metric 'fdl_mirror_pending_bytes{repo="alpha"}' == 1000 "its bytes, as its catalog says"
wait_for_log 10 "a held pass logged" "$lines" repo=alpha 'pass held'
wait_for_metric 'fdl_mirror_ref_lag_seconds{repo="alpha",ref="refs/heads/main"}' '>=' 1 10 "lag grows while the ref is behind"
integrity=$(metric 'fdl_mirror_integrity_failures_total{repo="alpha",kind="size_mismatch"}')
success=$(metric 'fdl_mirror_last_success_timestamp_seconds{repo="alpha"}')
wait_for_metric 'fdl_mirror_integrity_failures_total{repo="alpha",kind="size_mismatch"}' '>' "$integrity" 10 \
  "each pass that holds the version counts it"
wait_for_metric 'fdl_mirror_last_success_timestamp_seconds{repo="alpha"}' '>' "$success" 10 \
  "a pass that holds a version still completes"
[ "$(ref_of "$work/alpha-mirror" refs/heads/main)" = "$old_main" ] && pass || fail "the mirror's main moved to a held version"
[ ! -e "$work/alpha-mirror/versions/$held/version.json" ] && pass || fail "the held version was published"
expect_status 0 "the mirror with a held version is consistent" -- "$FDL_PUBLISHER" check "$work/alpha-mirror"

# --- drift clears: the origin's data file repaired -------------------------------------------
truncate -s 1000 "$work/alpha-origin/$data"
wait_for_metric 'fdl_mirror_ref_in_sync{repo="alpha",ref="refs/heads/main"}' == 1 15 "drift clears"
expect_metric 'fdl_mirror_ref_versions_behind{repo="alpha",ref="refs/heads/main"}' == 0 "no version behind"
expect_metric 'fdl_mirror_ref_lag_seconds{repo="alpha",ref="refs/heads/main"}' == 0 "lag back to 0"
expect_metric 'fdl_mirror_versions_held{repo="alpha",reason="size_mismatch"}' == 0 "a reason no longer seen drops to 0"
expect_metric 'fdl_mirror_pending_files{repo="alpha"}' == 0 "nothing pending any more"
[ "$(ref_of "$work/alpha-mirror" refs/heads/main)" = "$held" ] && pass || fail "the repaired version is not the mirror's main"
expect_status 0 "fdl-mirror verify after the repair" -- "$FDL_MIRROR" verify "$work/alpha-mirror"

# --- immutability violations, in beta only -----------------------------------------------------
tag=$(ref_of "$work/beta-mirror" refs/tags/v1)
beta_main=$(ref_of "$work/beta-origin" refs/heads/main)
scrape
held_passes=$(metric 'fdl_mirror_passes_total{repo="beta",result="held"}')
set_ref "$work/beta-origin" refs/tags/v1 "$beta_main"
wait_for_metric 'fdl_mirror_immutability_violations_total{repo="beta",kind="tag_moved"}' '>=' 1 15 "a moved tag counted"
expect_metric 'fdl_mirror_ref_in_sync{repo="beta",ref="refs/tags/v1"}' == 0 "the moved tag is out of sync"
expect_metric 'fdl_mirror_ref_versions_behind{repo="beta",ref="refs/tags/v1"}' == 0 "a moved tag is not 'behind'"
expect_metric 'fdl_mirror_passes_total{repo="beta",result="held"}' '>' "$held_passes" "a pass that sees a violation is 'held'"
moved=$(metric 'fdl_mirror_immutability_violations_total{repo="beta",kind="tag_moved"}')
wait_for_metric 'fdl_mirror_immutability_violations_total{repo="beta",kind="tag_moved"}' '>' "$moved" 10 \
  "each pass that sees the moved tag counts it"
[ "$(ref_of "$work/beta-mirror" refs/tags/v1)" = "$tag" ] && pass || fail "the mirror's tag moved"

dataset=versions/$tag/dataset.json
cp "$work/beta-mirror/$dataset" "$work/dataset.before"
{ cat "$work/beta-origin/$dataset"; echo ' '; } | replace_file "$work/beta-origin/$dataset"
wait_for_metric 'fdl_mirror_immutability_violations_total{repo="beta",kind="version_rewritten"}' '>=' 1 15 \
  "a rewritten version counted"
cmp -s "$work/dataset.before" "$work/beta-mirror/$dataset" && pass || fail "the mirror's copy of a rewritten file changed"
for kind in version_rewritten file_deleted_at_origin file_added_at_origin tag_moved branch_rewound; do
  expect_metric "fdl_mirror_immutability_violations_total{repo=\"alpha\",kind=\"$kind\"}" == 0 "alpha has no $kind"
done
expect_metric 'fdl_mirror_immutability_violations_total{repo="beta",kind="branch_rewound"}' == 0 "beta has no branch_rewound"

# --- the exposition as a whole ---------------------------------------------------------------
scrape
total=0
for result in ok held failed timeout; do
  total=$((total + $(metric "fdl_mirror_passes_total{repo=\"alpha\",result=\"$result\"}")))
done
# One scrape: every finished pass is in both the counters and the duration histogram.
count=$(metric 'fdl_mirror_pass_duration_seconds_count{repo="alpha"}')
[ "$count" = "$total" ] && pass || fail "pass_duration_seconds_count is $count, passes_total sums to $total"
# Not under journald: each line starts with its time (UTC, ms) and level.
if grep -vE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z (debug|info|notice|warning|error) ' \
  "$daemon_log" >"$work/unprefixed"; then
  fail "log lines without a time and a level:"$'\n'"$(head -n 5 "$work/unprefixed" | sed 's/^/  /')"
else pass; fi
promtool=$(find_promtool)
if [ -z "$promtool" ]; then fail "promtool not found: run scripts/setup"; else
  expect_status 0 "promtool check metrics" -- sh -c '"$1" check metrics <"$2"' sh "$promtool" "$work/metrics"
fi

stop_daemon TERM 10
expect_clean_exit "SIGTERM"
finish
